"""Goodput SDK: the job side of the Goodput control plane (see docs/contract.md)."""

__version__ = "0.1.0"
