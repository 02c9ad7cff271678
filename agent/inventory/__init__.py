"""The public PyTorch API that bugs can transfer to, with cached context-free semantics."""
