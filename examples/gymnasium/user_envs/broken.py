"""A module that does not import: the server says so and keeps serving."""

raise RuntimeError("broken on purpose")
