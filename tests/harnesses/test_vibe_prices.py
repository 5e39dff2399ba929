"""Vibe's cost, derived from the active model's configured prices as Vibe derives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.core.errors import ConfigError
from tether.events.accounting import Ledger
from tether.events.counting import count_stream
from tether.harnesses.base import RunSpec
from tether.harnesses.vibe import VibeHarness
from tether.harnesses.vibe_prices import VibePrices, resolve_prices
from tether.testing.transcripts import find_transcripts

TRANSCRIPTS = Path(__file__).parents[1] / "transcripts"

MOCK = """\
active_model = "mock"

[[models]]
name = "mock-model"
provider = "mock"
alias = "mock"
input_price = 1.0
output_price = 2.0
"""


def _home(tmp_path: Path, config: str | None = MOCK) -> dict[str, str]:
    home = tmp_path / "vibe-home"
    home.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (home / "config.toml").write_text(config)
    return {"HOME": str(tmp_path), "VIBE_HOME": str(home)}


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return work


def test_cost_is_vibes_session_token_cost() -> None:
    # vibe.utils.pricing.session_token_cost: cached tokens at the cached price,
    # clamped to the input tokens; prices are per million tokens.
    p = VibePrices("m", input_price=1.5, output_price=7.5, cached_input_price=0.15)
    assert p.cost(1_000_000, 0) == pytest.approx(1.5)
    assert p.cost(1_000_000, 1_000_000, 400_000) == pytest.approx(0.6 * 1.5 + 0.4 * 0.15 + 7.5)
    assert p.cost(10, 0, 50) == pytest.approx(10 * 0.15 / 1e6)  # cached past input: clamped
    no_cache_price = VibePrices("m", input_price=2.0, output_price=0.0)
    assert no_cache_price.cost(500_000, 0, 250_000) == pytest.approx(1.0)


def test_the_configured_active_model_sets_the_prices(tmp_path: Path) -> None:
    prices = resolve_prices(_home(tmp_path), _work(tmp_path))
    assert (prices.alias, prices.input_price, prices.output_price) == ("mock", 1.0, 2.0)
    assert prices.cached_input_price is None
    assert prices.source.endswith("config.toml")


def test_without_a_config_vibes_built_in_model_prices_the_run(tmp_path: Path) -> None:
    prices = resolve_prices(_home(tmp_path, None), _work(tmp_path))
    assert (prices.alias, prices.input_price, prices.output_price) == (
        "mistral-medium-3.5",
        1.5,
        7.5,
    )
    assert prices.cached_input_price == 0.15


def test_the_environment_and_dotenv_pin_the_model(tmp_path: Path) -> None:
    config = MOCK + '\n[[models]]\nname = "big"\nprovider = "mock"\ninput_price = 3\n'
    env = _home(tmp_path, config)
    assert resolve_prices({**env, "VIBE_ACTIVE_MODEL": "big"}, _work(tmp_path)).input_price == 3
    (Path(env["VIBE_HOME"]) / ".env").write_text("export VIBE_ACTIVE_MODEL='big'\n")
    assert resolve_prices(env, _work(tmp_path)).alias == "big"  # alias defaults to the name
    # the process's own value wins over the .env file, as in Vibe
    assert resolve_prices({**env, "VIBE_ACTIVE_MODEL": "mock"}, _work(tmp_path)).alias == "mock"
    # and the run's own model (the profile's, set on Vibe's command line) over both
    pinned = resolve_prices({**env, "VIBE_ACTIVE_MODEL": "mock"}, _work(tmp_path), model="big")
    assert (pinned.alias, pinned.input_price) == ("big", 3)


def test_a_partial_entry_for_the_default_model_keeps_its_other_prices(tmp_path: Path) -> None:
    config = '[[models]]\nalias = "mistral-medium-3.5"\noutput_price = 9.0\n'
    prices = resolve_prices(_home(tmp_path, config), _work(tmp_path))
    assert (prices.input_price, prices.output_price, prices.cached_input_price) == (
        1.5,
        9.0,
        0.15,
    )


def test_a_project_config_counts_only_when_trusted(tmp_path: Path) -> None:
    env = _home(tmp_path)
    work = _work(tmp_path)
    (work / ".vibe").mkdir()
    (work / ".vibe" / "config.toml").write_text(
        '[models.mock]\nname = "mock-model"\nprovider = "mock"\ninput_price = 5.0\n'
    )
    assert resolve_prices(env, work).input_price == 1.0  # untrusted folder: not read
    trusted = resolve_prices(env, work, ["--auto-approve", "--trust"])
    assert (trusted.input_price, trusted.output_price) == (5.0, 2.0)  # merged over the user's
    (Path(env["VIBE_HOME"]) / "trusted_folders.toml").write_text(
        f"trusted = [{str(tmp_path)!r}]\nuntrusted = []\n"
    )
    assert resolve_prices(env, work).input_price == 5.0


def test_an_unknown_active_model_or_a_broken_config_is_a_config_error(tmp_path: Path) -> None:
    env = _home(tmp_path)
    with pytest.raises(ConfigError, match="'nope' is not among the models"):
        resolve_prices({**env, "VIBE_ACTIVE_MODEL": "nope"}, _work(tmp_path))
    (Path(env["VIBE_HOME"]) / "config.toml").write_text("active_model = [\n")
    with pytest.raises(ConfigError, match="is not TOML"):
        resolve_prices(env, _work(tmp_path))
    (Path(env["VIBE_HOME"]) / "config.toml").write_text(
        '[[models]]\nalias = "x"\nname = "x"\ninput_price = "cheap"\nactive_model = "x"\n'
    )
    with pytest.raises(ConfigError, match="input_price must be a number"):
        resolve_prices({**env, "VIBE_ACTIVE_MODEL": "x"}, _work(tmp_path))


def test_a_model_without_prices_refuses_a_cost_limit(tmp_path: Path) -> None:
    config = 'active_model = "free"\n[[models]]\nname = "free"\nprovider = "mock"\n'
    with pytest.raises(ConfigError, match="no prices") as caught:
        VibeHarness().priced(_home(tmp_path, config), _work(tmp_path))
    assert "input_price" in str(caught.value)


def test_a_priced_adapter_pins_its_model_and_costs_each_completion(tmp_path: Path) -> None:
    adapter = VibeHarness().priced(_home(tmp_path), _work(tmp_path))
    argv = adapter.build_command(RunSpec(prompt="go", max_cost_usd=0.02))
    assert argv[:2] == ["env", "VIBE_ACTIVE_MODEL=mock"]
    assert argv[argv.index("--max-price") + 1] == "0.02"
    # the profile's own model wins over the pin
    assert "VIBE_ACTIVE_MODEL=other" in adapter.build_command(RunSpec(prompt="go", model="other"))
    assert "VIBE_ACTIVE_MODEL" not in " ".join(VibeHarness().build_command(RunSpec(prompt="go")))
    # The recorded run against tether's scripted model (priced alike in its config):
    # the cost is the usage of each completion in the journal at 1 and 2 USD per million.
    (t,) = [t for t in find_transcripts(TRANSCRIPTS, "vibe") if t.name == "tether-five-steps"]
    assert t.session is not None
    with t.open_stream() as stream, t.session.open("rb") as journal:
        priced = count_stream(adapter, stream, journal)
    with t.open_stream() as stream, t.session.open("rb") as journal:
        plain: Ledger = count_stream(VibeHarness(), stream, journal)
    assert plain.usage.cost_usd is None  # no prices, no cost: never a made-up 0
    u = priced.usage
    assert u.input_tokens > 0 and u.cache_read_tokens == 0
    assert u.cost_usd == pytest.approx((u.input_tokens * 1.0 + u.output_tokens * 2.0) / 1e6)
