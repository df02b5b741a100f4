"""Model calls: an OpenAI-compatible client, concurrency, retries and a resumable journal."""
