"""Label Studio: server management, task push, annotation pull, webhook ingestion."""
