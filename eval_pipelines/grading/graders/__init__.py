"""Graders: one module per assertion type, found through ``registry``."""
