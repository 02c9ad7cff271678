"""Settings for every stage: CLI flag > environment > transfuzz.toml > default.

Secrets (API keys, tokens) are pydantic ``SecretStr`` so their repr, str and JSON dump
are masked; nothing in TransFuzz logs or stores their plain value.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SecretStr, field_validator, model_validator

DEFAULT_DB_URL = "sqlite:///transfuzz.db"
CONFIG_FILE_ENV = "TRANSFUZZ_CONFIG"
CONFIG_FILE_NAME = "transfuzz.toml"

# environment variable -> settings field
ENV_FIELDS: dict[str, str] = {
    "TRANSFUZZ_DB_URL": "db_url",
    "TRANSFUZZ_LLM": "llm",
    "OPENAI_BASE_URL": "openai_base_url",
    "OPENAI_API_KEY": "openai_api_key",
    "TRANSFUZZ_MODEL": "model",
    "GITHUB_TOKEN": "github_token",
    "TRANSFUZZ_ARTIFACTS_DIR": "artifacts_dir",
    "TRANSFUZZ_LLM_BUDGET": "llm_budget",  # e.g. 200k-tokens,50-calls (see agent.llm.limits)
    "TRANSFUZZ_LLM_TIMEOUT": "llm_timeout_s",  # e.g. 30s
    "TRANSFUZZ_LLM_CONCURRENCY": "llm_concurrency",
    "TRANSFUZZ_LLM_RETRY_AFTER_CAP": "llm_retry_after_cap_s",
    "TRANSFUZZ_LLM_BREAKER": "llm_breaker_failures",
    "TRANSFUZZ_EMBEDDING_MODEL": "embedding_model",
    "TRANSFUZZ_DESCRIBE_MAX_CALLS": "describe_max_calls",
    "TRANSFUZZ_INGEST_MAX_BODY_KIB": "ingest_max_body_kib",
    "TRANSFUZZ_RECORD_BUDGET": "record_budget_s",  # e.g. 2m; 0 = never run reports' repros at extract
}


class Settings(BaseModel):
    """Merged configuration; build it with :func:`load_settings`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    db_url: str = DEFAULT_DB_URL
    llm: Literal["offline", "openai"] | None = None
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    model: str = "gpt-4o-mini"
    github_token: SecretStr | None = None
    llm_timeout_s: float = 60.0
    # One budget for every LLM stage of a command (None = no limit); `llm_budget` sets both.
    llm_token_budget: int | None = 2_000_000
    llm_call_budget: int | None = None
    llm_retry_after_cap_s: float = 30.0  # a server's Retry-After is honoured up to this
    llm_breaker_failures: int = 3  # consecutive transport failures that stop an LLM stage
    llm_concurrency: int = 4  # parallel requests (batch extraction)
    # Saved failing inputs and worker scratch space; evidence and exported repros point here.
    artifacts_dir: str = "transfuzz-artifacts"
    # Embeddings model served by the endpoint's /v1/embeddings; unset = TF-IDF matching only.
    embedding_model: str | None = None
    # LLM calls per transfer run spent describing inventory APIs (batched, resumable across runs).
    describe_max_calls: int = 10
    # Issue and comment bodies longer than this are cut at ingest (and marked truncated).
    ingest_max_body_kib: int = 256
    # Seconds one extract run may spend running reports' repros under the recorder, in the sandbox
    # (agent/extract/record_stage.py); 0 turns the recorded runs off.
    record_budget_s: float = 120.0

    @model_validator(mode="before")
    @classmethod
    def _expand_llm_budget(cls, data: Any) -> Any:
        """`llm_budget = "200k-tokens,50-calls"` (file, env, flag) sets the token and call limits."""
        if isinstance(data, dict) and "llm_budget" in data:
            from agent.llm.limits import parse_llm_budget

            data = dict(data)
            spec = parse_llm_budget(str(data.pop("llm_budget")))
            data["llm_token_budget"], data["llm_call_budget"] = spec.tokens, spec.calls
        return data

    @field_validator("llm_timeout_s", "llm_retry_after_cap_s", mode="before")
    @classmethod
    def _parse_seconds(cls, value: Any) -> Any:
        from agent.llm.limits import parse_seconds

        return parse_seconds(value) if isinstance(value, (str, int, float)) else value

    @field_validator("record_budget_s", mode="before")
    @classmethod
    def _parse_budget(cls, value: Any) -> Any:
        from agent.llm.limits import parse_seconds

        if isinstance(value, str) and value.strip() in ("0", "0s", "off", "none"):
            return 0.0
        return parse_seconds(value) if isinstance(value, str) else value

    @field_validator("llm", mode="before")
    @classmethod
    def _normalise_llm(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip().lower() or None
        return value

    @property
    def effective_llm(self) -> Literal["offline", "openai"]:
        """The offline analyzer unless an endpoint or key is configured (or asked for)."""
        if self.llm is not None:
            return self.llm
        return "openai" if (self.openai_base_url or self.openai_api_key) else "offline"


def _read_config_file(path: Path | None) -> dict[str, Any]:
    if path is None:
        env_path = os.environ.get(CONFIG_FILE_ENV)
        path = Path(env_path) if env_path else Path.cwd() / CONFIG_FILE_NAME
    if not path.is_file():
        return {}
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    section = data.get("transfuzz", data)
    allowed = set(Settings.model_fields) | {"llm_budget"}
    unknown = sorted(set(section) - allowed)
    if unknown:
        raise ValueError(f"{path}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(allowed))}")
    return dict(section)


def load_settings(
    overrides: dict[str, Any] | None = None,
    *,
    environ: dict[str, str] | None = None,
    config_file: Path | None = None,
) -> Settings:
    """Merge defaults < transfuzz.toml < environment < explicit overrides (CLI flags)."""
    env = os.environ if environ is None else environ
    merged: dict[str, Any] = _read_config_file(config_file)
    for var, field in ENV_FIELDS.items():
        value = env.get(var)
        if value:
            merged[field] = value
    for key, value in (overrides or {}).items():
        if value is not None:
            merged[key] = value
    return Settings(**merged)


def mask_url(url: str) -> str:
    """Hide the password of a database URL for messages."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy can parse: show only the scheme
        return url.split("://", 1)[0] + "://***" if "://" in url else "***"

