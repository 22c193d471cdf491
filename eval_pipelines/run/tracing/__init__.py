"""OpenTelemetry traces of outputs (promptfoo ``tracing``): the span model and OTLP decoding
(``spans``), the trace context of a traced model phase (``context``), and the OTLP receiver run
inside a traced script provider's sandbox (``otlp_receiver``)."""
