"""The phoneloop HTTP service: lake browsing, frames, read-only SQL, webhooks, the trajectory viewer."""
