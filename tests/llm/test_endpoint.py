"""The judge's identity and key rules (judge/endpoint.py): what the reply cache and the Authorization header see."""

import pytest

from ratio_bench.core.errors import UsageError
from ratio_bench.llm.cache import request_key
from ratio_bench.llm.client import JudgeSettings
from ratio_bench.llm.endpoint import NO_KEY, api_key_for, normalise_base_url


@pytest.mark.parametrize(
    "url, expected",
    [
        ("http://LOCALHOST:8091/v1/", "http://localhost:8091/v1"),
        ("https://api.openai.com:443/v1", "https://api.openai.com/v1"),
        ("http://user:secret@10.0.0.5:80/v1", "http://10.0.0.5/v1"),
        (None, "https://api.openai.com/v1"),
    ],
)
def test_base_urls_normalise_to_one_identity(url, expected):
    assert normalise_base_url(url) == expected


def test_a_url_without_scheme_is_a_usage_error_naming_the_flag():
    with pytest.raises(UsageError, match="--base-url"):
        normalise_base_url("127.0.0.1:9")


def test_replies_of_one_server_never_answer_for_another():
    a = JudgeSettings(model="m", base_url="http://127.0.0.1:8001/v1")
    b = JudgeSettings(model="m", base_url="http://127.0.0.1:8002/v1")
    body = a.request_body([{"role": "user", "content": "same prompt"}])
    assert body == b.request_body([{"role": "user", "content": "same prompt"}])
    assert request_key(body, a.identity()) != request_key(body, b.identity())
    shared_a = JudgeSettings(model="m", base_url="http://127.0.0.1:8001/v1", judge_id="provider-x")
    shared_b = JudgeSettings(model="m", base_url="http://127.0.0.1:8002/v1", judge_id="provider-x")
    assert request_key(body, shared_a.identity()) == request_key(body, shared_b.identity())


def test_the_openai_key_goes_to_openai_only(monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-sentinel-openai")
    monkeypatch.setenv("MY_KEY", "sk-sentinel-mine")
    assert api_key_for("https://api.openai.com/v1", None) == "sk-sentinel-openai"
    assert api_key_for("http://127.0.0.1:8091/v1", None) == NO_KEY
    assert api_key_for("http://127.0.0.1:8091/v1", "MY_KEY") == "sk-sentinel-mine"
    assert capsys.readouterr().err == ""  # loopback over http: no warning
    assert api_key_for("http://judge.example.org/v1", "MY_KEY") == "sk-sentinel-mine"
    err = capsys.readouterr().err
    assert "plain http" in err and "judge.example.org" in err and "sk-sentinel" not in err
