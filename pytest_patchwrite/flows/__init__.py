"""The flows: check, the edit transaction, the PR diff, self-attestation, the base tree, the bind use case."""
