"""Debuggee package for -m runs."""
