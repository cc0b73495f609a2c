"""Numbers and their evidence: log entries and reading, the bindings file, the binder, derived values, bindings diff."""
