"""The one LaTeX scanner: masking, groups, conditionals, cite keys, numbers, sentences, tables, placeholders."""
