"""LangChain's OpenAI chat model, reading one more field of a streamed reply: a refusal.

OpenAI streams a refusal as `delta.refusal` pieces, which langchain-openai 1.x keeps only for replies that
are not streamed; without it a refused step would read as an empty reply and be "repaired". Imported only
when an OpenAI-compatible model is configured.
"""

from __future__ import annotations

from typing import Any

from langchain_core.outputs import ChatGenerationChunk
from langchain_openai import ChatOpenAI


class StreamingChatOpenAI(ChatOpenAI):
    def _convert_chunk_to_generation_chunk(
        self, chunk: dict[str, Any], default_chunk_class: type, base_generation_info: dict[str, Any] | None
    ) -> ChatGenerationChunk | None:
        out = super()._convert_chunk_to_generation_chunk(chunk, default_chunk_class, base_generation_info)
        choices = chunk.get("choices") or []
        refusal = (choices[0].get("delta") or {}).get("refusal") if choices else None
        if refusal and out is not None:
            out.message.additional_kwargs["refusal"] = refusal
        return out
