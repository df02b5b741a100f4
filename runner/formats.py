"""Asking a server to constrain completions to the answer format, and one-shot prompting.

A constrained run measures the model's numbers, not its format discipline: every line it writes
says so in `meta.answer_format`, and the scorer marks such submissions. Each server offers its own
mechanism; the user names it (a server that refuses it stops the run with its message):

| mechanism      | servers                              | request field                                  |
|----------------|--------------------------------------|------------------------------------------------|
| `gbnf`         | llama.cpp's server, llama-cpp-python | `grammar`: a GBNF grammar                      |
| `vllm-regex`   | vLLM                                 | `guided_regex` (and `structured_outputs.regex`) |
| `sglang-regex` | SGLang                               | `regex`                                        |
| `json-schema`  | OpenAI and most servers              | `response_format` (a JSON schema); unwrapped    |

A `json-schema` answer `{"answer": "4.375000"}` is written back between the answer tags.
"""

from __future__ import annotations

import json
from typing import Any

from mathbode.schema.layout import layout

MECHANISMS = ("gbnf", "vllm-regex", "sglang-regex", "json-schema")
#: At most this many integer digits: enough for every answer of the grid, and a bound that stops a
#: small model from emitting digits until the token limit cuts the closing tag off.
INTEGER_DIGITS = 9


def _decimal_regex() -> str:
    return rf"-?[0-9]{{1,{INTEGER_DIGITS}}}\.[0-9]{{{layout().answer_decimals}}}"


def answer_regex() -> str:
    """The whole completion: `[answer_start] <decimal with the format's decimals> [answer_end]`."""
    lay = layout()
    tag = lambda text: text.replace("[", r"\[").replace("]", r"\]")  # noqa: E731
    return f"{tag(lay.answer_start)} {_decimal_regex()} {tag(lay.answer_end)}"


def answer_grammar() -> str:
    """The same language as `answer_regex`, as a GBNF grammar."""
    lay = layout()
    integer = " ".join(["[0-9]"] + ["[0-9]?"] * (INTEGER_DIGITS - 1))
    decimals = " ".join(["[0-9]"] * lay.answer_decimals)
    return f'root ::= "{lay.answer_start} " "-"? {integer} "." {decimals} " {lay.answer_end}"\n'


def request_fields(mechanism: str | None) -> dict[str, Any]:
    """Extra request fields that ask the server to constrain the completion."""
    if mechanism is None:
        return {}
    if mechanism == "gbnf":
        return {"extra_body": {"grammar": answer_grammar()}}
    if mechanism == "vllm-regex":
        return {"extra_body": {"guided_regex": answer_regex(), "structured_outputs": {"regex": answer_regex()}}}
    if mechanism == "sglang-regex":
        return {"extra_body": {"regex": answer_regex()}}
    if mechanism == "json-schema":
        schema = {
            "type": "object",
            "properties": {"answer": {"type": "string", "pattern": f"^{_decimal_regex()}$"}},
            "required": ["answer"],
            "additionalProperties": False,
        }
        return {"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}}
    raise ValueError(f"unknown mechanism {mechanism!r}")


def unwrap(mechanism: str | None, text: str) -> str:
    """The response as the answer format: a JSON-schema answer goes between the tags; others are as sent."""
    if mechanism != "json-schema":
        return text
    try:
        answer = json.loads(text)["answer"]
    except (ValueError, KeyError, TypeError):
        return text  # not what was asked for: kept as is, and it will parse as non-compliant
    lay = layout()
    return f"{lay.answer_start} {answer} {lay.answer_end}"


def one_shot_messages() -> list[dict[str, str]]:
    """A worked example of the answer format, as a user/assistant pair before the real prompt.

    The example is not a question of the grid (no family asks it), so it gives away no answer.
    """
    lay = layout()
    question = (
        "A rectangle has an area of 17.5 square metres and a width of 4 metres. What is its length in metres?"
        f"\n\n{lay.answer_instruction()}"
    )
    answer = f"{lay.answer_start} 4.{'375'.ljust(lay.answer_decimals, '0')} {lay.answer_end}"
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
