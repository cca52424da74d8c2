"""Benchmarks (data loading + scoring), metrics and reports."""
