"""A billion-laughs YAML document: a few hundred bytes that expand to 9**9 strings."""

from __future__ import annotations


def billion_laughs(indent: str) -> str:
    """Nine levels of nine aliases each: 9**9 strings once expanded, a few hundred bytes written."""
    lines = [f'{indent}lol0: &a0 ["lol"]']
    lines += [f"{indent}lol{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"
