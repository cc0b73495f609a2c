"""The pages flow: rendering both sides of a diff, pairing pages, pixel comparison, the HTML report."""
