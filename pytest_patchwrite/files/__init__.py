"""Files: the bounded reader, streamed reads, tree copies, the read boundary, temp files, environment faults."""
