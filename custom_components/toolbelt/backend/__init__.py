"""Model-server client: turns OpenAI-compatible HTTP into a small stream of deltas.

HA-free on purpose, so the tool loop and its tests never see HTTP or the SDK.
"""
