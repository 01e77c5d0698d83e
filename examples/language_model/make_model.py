"""Makes the example language model: a tokenizer, trained weights, an 8da4w program.

    python3 make_model.py --output-dir DIR [--text FILE] [--steps N]

1. Trains a SentencePiece tokenizer (512 pieces) on a text that ships with
   Debian, the GNU GPL version 3 in /usr/share/common-licenses: DIR/tokenizer.model.
2. Trains the Llama-style model of model.py on that text for --steps steps
   (300 by default: about half a minute of CPU time; the weights start from
   PyTorch's seeded initialisation), each a batch of 16 windows of 64 tokens
   from paragraphs that begin with the tokenizer's beginning-of-sequence id
   and end with its end-of-sequence id.
3. Quantizes it 8da4w (int4 weights in groups of 32, int8 activations per
   token) and exports it for prompts and generations of up to 128 tokens:
   DIR/license_model.etp.
"""

import argparse
import os
import time

import sentencepiece as spm
import torch
from torch.nn import functional as F

import et_ops.export as ex
from model import Llama

MAX_SEQ_LEN = 128
VOCAB_SIZE = 512
WINDOW = 64
BATCH = 16


def train_tokenizer(text_path, output_dir):
    prefix = os.path.join(output_dir, "tokenizer")
    spm.SentencePieceTrainer.train(input=text_path, model_prefix=prefix, vocab_size=VOCAB_SIZE,
                                   character_coverage=1.0, num_threads=1, minloglevel=2)
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


def token_stream(text_path, tokenizer):
    """Every paragraph of the text as bos, its pieces, eos; all in one tensor."""
    with open(text_path, encoding="utf-8") as f:
        paragraphs = [" ".join(p.split()) for p in f.read().split("\n\n") if p.strip()]
    ids = []
    for paragraph in paragraphs:
        ids += [tokenizer.bos_id()] + tokenizer.encode(paragraph) + [tokenizer.eos_id()]
    return torch.tensor(ids, dtype=torch.int64)


def train(model, stream, steps):
    generator = torch.Generator().manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    positions = torch.arange(WINDOW)
    model.train()
    start = time.perf_counter()
    for step in range(steps):
        starts = torch.randint(0, len(stream) - WINDOW - 1, (BATCH,), generator=generator)
        windows = torch.stack([stream[s:s + WINDOW + 1] for s in starts.tolist()])
        logits = model(windows[:, :-1], positions)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == 0 or step == steps - 1:
            print(f"step {step + 1}/{steps}: loss {loss.item():.2f}")
    print(f"trained for {time.perf_counter() - start:.1f} s")
    return model.eval()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--text", default="/usr/share/common-licenses/GPL-3")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    torch.manual_seed(0)
    tokenizer = train_tokenizer(args.text, args.output_dir)
    stream = token_stream(args.text, tokenizer)
    print(f"tokenizer: {tokenizer.get_piece_size()} pieces, the text is {len(stream)} tokens")
    model = train(Llama(VOCAB_SIZE, max_seq_len=MAX_SEQ_LEN), stream, args.steps)
    program = ex.export_llm(model, max_seq_len=MAX_SEQ_LEN, scheme="8da4w", name="license_model")
    path = os.path.join(args.output_dir, "license_model.etp")
    program.save(path)
    print(f"wrote {path}: {len(program.to_bytes())} bytes")


if __name__ == "__main__":
    main()
