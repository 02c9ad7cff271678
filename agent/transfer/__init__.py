"""Transfer: rank target APIs whose context-free semantics match a pattern's source API."""
