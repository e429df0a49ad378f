"""The demo of ``make demo`` and the fakes it runs against (a scripted
OpenAI-compatible LLM). Development only: not part of the installed package."""
