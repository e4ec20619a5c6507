"""Rollouts: policies on mock and real phones, the parallel runner, evaluation tables."""
