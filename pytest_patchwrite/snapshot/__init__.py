"""The manuscript snapshot: the manuscript read once, what is derived from it, engine choice, bibliographies."""
