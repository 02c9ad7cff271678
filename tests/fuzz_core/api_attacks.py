"""API names the trust-boundary issue saw turned into patterns, candidates and worker calls."""

ATTACK_APIS = ["torch.os.system", "os.system", "builtins.eval", "torch.hub.load", "torch.load",
               "torch.utils.cpp_extension.load_inline", "torch.Tensor.__class__", "torch.ops.load_library",
               # issue 22: allowed by the old deny-list (writes files, a global module hook, a global switch)
               "torch.PyTorchFileWriter", "torch.nn.modules.module.register_module_forward_hook",
               "torch.autograd.set_detect_anomaly"]
