"""Every model call: connection limits, the response cache, retries, the circuit breaker, per-call telemetry."""
