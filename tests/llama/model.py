"""Tiny GGUF models, made at test time, that make llama-server write chosen text.

No model weights can be downloaded here, and none are needed: a model whose
weights are set by hand writes exactly what a test wants, through the real
server's tokenizer, chat template, sampler, grammar and tool-call parser.

The architecture is llama's: 2 blocks, width 64, a byte-level BPE vocabulary,
Qwen2.5's chat template (with tools), ``<|im_end|>`` as end of turn.

- **A bigram table.** Both blocks' FFNs and the second block's attention
  write nothing, so the last position's hidden state is its own token's
  embedding: the next token depends only on the current one. Each piece of a
  wanted reply is one user-defined token (llama.cpp prints those verbatim);
  each token's embedding is one basis vector (a pair of them past 59 tokens),
  and the output matrix maps it to the next piece with a logit margin of 50,
  so any usual temperature follows the chain. The chain starts at the generation prompt's last token (the
  ``\\n`` after ``<|im_start|>assistant``) and ends with ``<|im_end|>``; every
  other token predicts ``<|im_end|>``.
- **A second chain after a tool result.** One attention head in the first
  block, queried only by ``\\n``, peaks where ``</tool_response>`` sits when
  the last message is a tool result: 5 tokens back, counted on the rotary
  positions (RoPE) of 64 frequency pairs (any other offset up to 4096
  scores at most a quarter as much). Its value adds a "switch"
  direction that moves the chain's start from the first reply to the answer
  after the tool.
- **Choices.** A recipe may add a second first reply nearly as likely (greedy
  decoding never takes it, sampling at 0.8 often does), and chains the model
  writes when a constraint rules its reply out (the next choice where the
  reply starts and where it ends).

A model is cached under ``~/.cache/toolbelt/gguf`` (``TOOLBELT_GGUF_CACHE``),
keyed by a hash of its recipe and of this file.
"""

from __future__ import annotations

from dataclasses import dataclass
import functools
import hashlib
import itertools
import json
import os
from pathlib import Path
import re

import numpy as np

HERE = Path(__file__).parent
TEMPLATE = (HERE / "qwen2_5_chat_template.jinja").read_text()

WIDTH = 64
N_FF = 64
CONTEXT = 8192
MARGIN = 50.0
TIE = 0.25
FALLBACK = 10.0
# Hidden dimensions: chain states first, then the fixed roles.
DIM_TOOL_END = WIDTH - 4  # </tool_response>: the switch head's key
DIM_SWITCH = WIDTH - 2  # written by the switch head
DIM_DEFAULT = WIDTH - 1  # every token off the chains: predicts <|im_end|>
# The switch head: one head wider than the model, every dimension rotated.
HEAD = 128
ROPE_BASE = 10.0
TOOL_END_BACK = 5
PEAK_SCORE = 13.0
SWITCH_LOGIT = 60.0

# Qwen2.5's control tokens, and the markup tokens its template writes.
CONTROL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
MARKUP = (
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    # Whole words, so the generation prompt is a fixed number of tokens.
    "assistant",
    "user",
    "system",
)
END = "<|im_end|>"
NEWLINE = "\n"

# Words the prompts are made of (with corpus.txt): learned as BPE tokens, a
# prompt of 4,000 characters is about a thousand tokens.
_CORPUS_WORDS = """
You are a helpful assistant that controls a smart home. Use the tools to act on
devices. When controlling a device, prefer passing just name and domain. When
controlling an area, prefer passing just area name and domain. Answer in plain
text. Keep it simple and to the point. The current time is Today's date is
Static Context: An overview of the areas and the devices in this smart home:
names: Kitchen light, Porch light, Living room lamp, Hallway light, domain: light
state: 'on' 'off' areas floors Kitchen Living Room Hallway Garage Bedroom Office
Tools function functions type object properties required description parameters
string integer number boolean array items enum minimum maximum additionalProperties
name area floor domain device_class brightness color temperature position
HassTurnOn HassTurnOff HassLightSet HassCancelAllTimers HassBroadcast GetLiveContext
GetDateTime HassSetPosition HassClimateSetTemperature HassMediaPause intent
Turns on/opens/presses a device or entity. For locks, this performs a 'lock'
action. Turns off/closes a device or entity. Sets the brightness percentage or
color of a light. Provides real-time information about the CURRENT state, value,
or mode of devices, sensors, entities, or areas. Use this tool for: answering
questions about current conditions, e.g. is the light on? what is the
temperature? You may call one or more functions to assist with the user query.
You are provided with function signatures within XML tags: For each function
call, return a json object with function name and arguments within tags
Turn on the kitchen light. Say hello in five words. Done. Sorry, I could not.
tool call response result success targets failed speech data error message
the a an of to in on for with and or is are be it this that as at by from not
"""


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-level alphabet: every byte as a printable character."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    chars = list(printable)
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, chars), strict=True))


BYTE_CHARS = _bytes_to_unicode()
# llama.cpp's "qwen2" pre-tokenizer, as far as Python's re can say it.
_PRE = re.compile(
    r"'(?:[sStTmMdD]|[rR][eE]|[vV][eE]|[lL][lL])|[^\r\n\w]?[^\W\d_]+|\d"
    r"| ?[^\s\w]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _encode(text: str) -> str:
    return "".join(BYTE_CHARS[b] for b in text.encode())


MERGES = 3000


@functools.cache
def _bpe() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Merged tokens and merges, learned from the corpus the usual BPE way.

    The corpus is what the tests send: two prompts Toolbelt rendered for HA's
    Assist (native and text mode, ``corpus.txt``), the chat template, a word
    list. Learned once per process.
    """
    corpus = (HERE / "corpus.txt").read_text() + _CORPUS_WORDS + TEMPLATE
    counts: dict[tuple[str, ...], int] = {}
    for chunk in _PRE.findall(corpus):
        word = tuple(_encode(chunk))
        counts[word] = counts.get(word, 0) + 1
    words = [list(word) for word in counts]
    freq = list(counts.values())
    pairs: dict[tuple[str, str], int] = {}
    where: dict[tuple[str, str], set[int]] = {}
    for index, word in enumerate(words):
        for pair in itertools.pairwise(word):
            pairs[pair] = pairs.get(pair, 0) + freq[index]
            where.setdefault(pair, set()).add(index)
    tokens: dict[str, None] = {}
    merges: list[str] = []
    for _ in range(MERGES):
        best = max(pairs, key=lambda p: (pairs[p], p), default=None)
        if best is None:
            break
        merged = best[0] + best[1]
        tokens[merged] = None
        merges.append(f"{best[0]} {best[1]}")
        for index in where.pop(best):
            word = words[index]
            for pair in itertools.pairwise(word):
                pairs[pair] -= freq[index]
                if not pairs[pair]:
                    del pairs[pair]
            rebuilt: list[str] = []
            position = 0
            while position < len(word):
                if word[position : position + 2] == list(best):
                    rebuilt.append(merged)
                    position += 2
                else:
                    rebuilt.append(word[position])
                    position += 1
            words[index] = rebuilt
            for pair in itertools.pairwise(rebuilt):
                pairs[pair] = pairs.get(pair, 0) + freq[index]
                where.setdefault(pair, set()).add(index)
    return tuple(tokens), tuple(merges)


@dataclass(frozen=True, slots=True)
class Recipe:
    """What the model writes: after a user message, and after a tool result.

    Each chain is a tuple of pieces, one token each; ``<|im_end|>`` follows
    the last. A piece may be a markup token (``<tool_call>``). No token may
    appear twice in the two chains together.
    """

    reply: tuple[str, ...]
    after_tool: tuple[str, ...] = ()
    # Another first reply, a little less likely than ``reply`` (logit TIE
    # lower): greedy decoding always writes ``reply``, sampling at 0.8 this
    # one about 4 times in 10.
    or_reply: tuple[str, ...] = ()
    # What the model writes when a constraint rules its reply out, best first:
    # each chain is the next choice (logit 10, 11... below) both where the
    # reply starts and where it ends (llama.cpp's "required" lets text come
    # first, then masks the end of the turn).
    fallbacks: tuple[tuple[str, ...], ...] = ()

    @property
    def chains(self) -> tuple[tuple[str, ...], ...]:
        """Every chain, each a path through the bigram table."""
        return (self.reply, self.after_tool, self.or_reply, *self.fallbacks)

    def key(self) -> str:
        """The cache key: this recipe and this file's code."""
        digest = hashlib.sha256(Path(__file__).read_bytes())
        digest.update(json.dumps(self.chains).encode())
        return digest.hexdigest()[:16]


def model_path(recipe: Recipe) -> Path:
    """The GGUF file for ``recipe``, built on first use."""
    cache = Path(
        os.environ.get("TOOLBELT_GGUF_CACHE")
        or Path.home() / ".cache" / "toolbelt" / "gguf"
    )
    path = cache / f"toolbelt-{recipe.key()}.gguf"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.part")
        write_model(recipe, partial)
        partial.replace(path)
    return path


@dataclass(slots=True)
class _Vocab:
    texts: list[str]
    types: list[int]
    ids: dict[str, int]

    def add(self, text: str, kind: int) -> int:
        if text not in self.ids:
            self.ids[text] = len(self.texts)
            self.texts.append(text)
            self.types.append(kind)
        return self.ids[text]


def _vocab(recipe: Recipe) -> _Vocab:
    from gguf import TokenType  # only where models are made

    vocab = _Vocab([], [], {})
    for char in BYTE_CHARS.values():
        vocab.add(char, TokenType.NORMAL)
    for text in CONTROL:
        vocab.add(text, TokenType.CONTROL)
    # Before the merged tokens: a piece that is also a word stays one token.
    for text in (*MARKUP, *itertools.chain(*recipe.chains)):
        vocab.add(text, TokenType.USER_DEFINED)
    for token in _bpe()[0]:
        vocab.add(token, TokenType.NORMAL)
    return vocab


def _chains(recipe: Recipe, vocab: _Vocab) -> dict[int, int]:
    """The bigram table: token id -> the id that must follow it."""
    follows: dict[int, int] = {}
    for chain in recipe.chains:
        if not chain:
            continue
        ids = [vocab.ids[piece] for piece in chain]
        for before, after in zip(ids, [*ids[1:], vocab.ids[END]], strict=True):
            if before in follows or vocab.texts[before] == BYTE_CHARS[ord(NEWLINE)]:
                raise ValueError(f"{vocab.texts[before]!r} cannot be in a chain here")
            follows[before] = after
    return follows


def _theta() -> np.ndarray:
    """The rotary frequencies, as llama.cpp computes them for HEAD dimensions."""
    return ROPE_BASE ** (-np.arange(HEAD // 2) / (HEAD // 2))


def _codes(count: int) -> tuple[np.ndarray, float]:
    """One unit embedding per chain token, and the logit it gives its successor.

    Dimension 0 is the newline's. Up to 59 tokens get a dimension each; more
    get a pair each (about 1,700 pairs): two pairs share at most one
    dimension, so a wrong successor gets at most half the logit, and the
    logit doubles to keep the margin.
    """
    dims = range(1, DIM_TOOL_END)
    eye = np.eye(WIDTH, dtype=np.float32)
    if count <= len(dims):
        return np.array([eye[d] for d in dims[:count]]).reshape(count, WIDTH), MARGIN
    pairs = list(itertools.islice(itertools.combinations(dims, 2), count))
    if len(pairs) < count:
        raise ValueError(f"{count} chain tokens; at most {len(pairs)}")
    codes = np.array([(eye[a] + eye[b]) / np.sqrt(2) for a, b in pairs])
    return codes.astype(np.float32), 2 * MARGIN


def _switch_head(
    embed: np.ndarray, newline: int, tool_end: int
) -> dict[str, np.ndarray]:
    """Block 0's attention: ``\\n`` reads a ``</tool_response>`` 5 tokens back.

    Scores are q.k / sqrt(HEAD) after RoPE turns each pair of q and k by its
    position times theta; a key turned back by 5 steps meets the query
    exactly 5 tokens later.
    """
    kq_scale = 1 / np.sqrt(HEAD)
    theta = _theta()
    # Every pair weighs the same: the cosines sum to the peak at offset 0, and
    # to at most a quarter of it anywhere from 4 to 4096 tokens away.
    amplitude = np.sqrt(PEAK_SCORE / len(theta) / kq_scale)
    query = np.zeros(HEAD)
    query[0::2] = amplitude
    key = np.zeros(HEAD)
    key[0::2] = amplitude * np.cos(TOOL_END_BACK * theta)
    key[1::2] = amplitude * np.sin(TOOL_END_BACK * theta)

    def normed(token: int, dim: int) -> float:
        """One dimension of ``token``'s embedding after the RMS norm."""
        row = embed[token].astype(np.float64)
        return float(row[dim] / np.sqrt(np.mean(row**2) + 1e-6))

    nl_dim = int(np.argmax(embed[newline]))
    wq = np.zeros((HEAD, WIDTH), np.float32)
    wk = np.zeros((HEAD, WIDTH), np.float32)
    wv = np.zeros((HEAD, WIDTH), np.float32)
    wo = np.zeros((WIDTH, HEAD), np.float32)
    wq[:, nl_dim] = query / normed(newline, nl_dim)
    wk[:, DIM_TOOL_END] = key / normed(tool_end, DIM_TOOL_END)
    wv[0, DIM_TOOL_END] = 1.0 / normed(tool_end, DIM_TOOL_END)
    wo[DIM_SWITCH, 0] = 1.0
    return {"attn_q": wq, "attn_k": wk, "attn_v": wv, "attn_output": wo}


def write_model(recipe: Recipe, path: Path) -> None:
    """Write the GGUF file for ``recipe`` to ``path``."""
    import gguf  # only where models are made

    if not recipe.reply:
        raise ValueError("a recipe needs a reply")
    vocab = _vocab(recipe)
    follows = _chains(recipe, vocab)
    newline = vocab.ids[BYTE_CHARS[ord(NEWLINE)]]
    end = vocab.ids[END]
    tool_end = vocab.ids["</tool_response>"]
    # A chain's last token predicts <|im_end|> as every token off the chains
    # does: it keeps the default embedding (summed codes would add up). The
    # reply's last one has choices when there are fallbacks: its own code.
    last = vocab.ids[recipe.reply[-1]]
    follows = {
        before: after
        for before, after in follows.items()
        if after != end or (before == last and recipe.fallbacks)
    }
    codes, strength = _codes(len(follows))

    # A unit row is sqrt(WIDTH) long after the RMS norm: logits are row . output.
    scale = 1 / np.sqrt(WIDTH)
    embed = np.zeros((len(vocab.texts), WIDTH), np.float32)
    embed[:, DIM_DEFAULT] = 1.0
    embed[newline] = np.eye(WIDTH)[0]
    for token, code in zip(follows, codes, strict=True):
        embed[token] = code
    embed[tool_end, DIM_TOOL_END] = 1.0

    output = np.zeros((len(vocab.texts), WIDTH), np.float32)
    output[end, DIM_DEFAULT] = MARGIN * scale
    for before, after in follows.items():
        output[after] += strength * scale * embed[before]
    starts = [(vocab.ids[recipe.reply[0]], MARGIN)]
    if recipe.or_reply:
        starts.append((vocab.ids[recipe.or_reply[0]], MARGIN - TIE))
    for rank, chain in enumerate(recipe.fallbacks):
        logit = MARGIN - FALLBACK - rank
        starts.append((vocab.ids[chain[0]], logit))
        output[vocab.ids[chain[0]]] += logit / MARGIN * strength * scale * embed[last]
    # With the switch on, the row is (newline + switch) / sqrt(2) after the
    # norm: the answer wins by far, and the replies are pushed below zero.
    switch = SWITCH_LOGIT * np.sqrt(2) * scale
    for start, logit in starts:
        output[start, 0] = logit * scale
        if recipe.after_tool:
            output[start, DIM_SWITCH] = -switch
    if recipe.after_tool:
        output[vocab.ids[recipe.after_tool[0]], DIM_SWITCH] = switch

    head = _switch_head(embed, newline, tool_end)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("toolbelt-test")
    writer.add_block_count(2)
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(WIDTH)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(1)
    writer.add_head_count_kv(1)
    writer.add_key_length(HEAD)
    writer.add_value_length(HEAD)
    writer.add_rope_dimension_count(HEAD)
    writer.add_rope_freq_base(ROPE_BASE)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(vocab.texts)
    writer.add_token_types(vocab.types)
    writer.add_token_merges(list(_bpe()[1]))
    writer.add_bos_token_id(vocab.ids["<|endoftext|>"])
    writer.add_eos_token_id(end)
    writer.add_add_bos_token(False)
    writer.add_chat_template(TEMPLATE)
    writer.add_tensor("token_embd.weight", embed)
    writer.add_tensor("output_norm.weight", np.ones(WIDTH, np.float32))
    writer.add_tensor("output.weight", output)
    ones = np.ones(WIDTH, np.float32)
    for block in range(2):
        for name, weights in head.items():
            tensor = weights if block == 0 else np.zeros_like(weights)
            writer.add_tensor(f"blk.{block}.{name}.weight", tensor)
        writer.add_tensor(f"blk.{block}.attn_norm.weight", ones)
        writer.add_tensor(f"blk.{block}.ffn_norm.weight", ones)
        writer.add_tensor(
            f"blk.{block}.ffn_gate.weight", np.zeros((N_FF, WIDTH), np.float32)
        )
        writer.add_tensor(
            f"blk.{block}.ffn_up.weight", np.zeros((N_FF, WIDTH), np.float32)
        )
        writer.add_tensor(
            f"blk.{block}.ffn_down.weight", np.zeros((WIDTH, N_FF), np.float32)
        )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
