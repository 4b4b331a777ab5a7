"""Home Assistant glue: the agent entity, entry, executor, history and check."""
