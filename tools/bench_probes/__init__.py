"""What tools/bench.py measures in fresh processes, one small program a module.

Each module runs as a script (``python tools/bench_probes/mmap_loader.py ARGS``, as the bench starts them) or with
``python -m bench_probes.mmap_loader ARGS`` from ``tools/``; its arguments come on the command line. The last line
it prints, ``BENCH {json}``, gives its own timings: ``seconds`` (the load or build, after the interpreter started)
and, for the reference models, ``forward`` and ``cpu`` (wall and CPU seconds of one forward pass); ``decode`` and
the decode probe's loops give seconds per generated token.
Every module is self-contained (none imports another), so each process holds only what it measures.

``import_only``      the import-only kernel's one cell (the bench runs its text in a fresh kernel)
``mmap_loader``      the memory-mapped ``open_checkpoint`` and the reads of notebooks 02-04
``plain_loader``     the same reads after a plain ``torch.load`` of the whole checkpoint
``standin_build``    building the stand-in into a folder
``meta_reference``   Meta's ``Transformer`` loaded the usual way, and its forward pass
``hf_copy``          a Hugging Face safetensors copy of a Meta-format checkpoint (not measured: the next one reads it)
``hf_reference``     Hugging Face's ``LlamaForCausalLM.from_pretrained`` on that copy, its forward pass and ``generate``
``decode``           notebook 08's decode with and without the cache, Meta's ``Llama3.generate``, the copy bandwidth
"""
