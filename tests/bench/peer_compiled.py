"""The PyTorch reference trainer with its model under torch.compile.

    python peer_compiled.py PEER [reference options...]

PEER is the reference script (annotated_train.py); its EncoderDecoder is
compiled as it is built, everything else runs unchanged, so the compile time
falls in the reference's untimed warm-up steps.
"""
import importlib.util
import sys

import torch

peer = sys.argv[1]
spec = importlib.util.spec_from_file_location("annotated_train", peer)
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)
eager_model = reference.EncoderDecoder
reference.EncoderDecoder = lambda *args, **kwargs: torch.compile(eager_model(*args, **kwargs))
sys.argv = [peer] + sys.argv[2:]
reference.main()
