"""The engine side: the sandbox, its command line and limits, the unconfined run, kpse, log and PDF readers, pages."""
