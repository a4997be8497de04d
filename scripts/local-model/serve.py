#!/usr/bin/env python3
"""Serve a GGUF with llama.cpp's OpenAI-compatible HTTP server (xllamacpp) on
127.0.0.1 only, one request at a time, until SIGTERM or SIGINT.

usage: serve.py MODEL.gguf PORT [CTX]

The chat template beside this file makes a fenced ```json block the tool-call
format, so llama.cpp returns real `tool_calls` for this model.
"""
import os
import signal
import sys
import time

import xllamacpp as xlc

model, port = sys.argv[1], int(sys.argv[2])
ctx = int(sys.argv[3]) if len(sys.argv) > 3 else 8192
threads = int(os.environ.get("THREADS", "2"))

params = xlc.CommonParams()
params.model.path = model
params.hostnames = ["127.0.0.1"]
params.port = port
params.n_ctx = ctx
params.n_parallel = 1
params.use_jinja = True
params.cpuparams.n_threads = threads
params.cpuparams_batch.n_threads = threads
params.ui = False
params.model_alias = "qwen2.5-coder-1.5b"
params.verbosity = int(os.environ.get("VERB", "1"))
template = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qwen25-tools.jinja")
with open(template) as f:
    params.chat_template = f.read()
server = xlc.Server(params)
print("listening", server.listening_address, flush=True)

stopping = False


def stop(*_):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
while not stopping:
    time.sleep(0.5)
del server
