"""The release: build configs, de-duplication, temporal partitions, candidate pools, Hub layout, card, publish."""
