"""Real tools that call web services, one with ``requests`` and one with ``httpx``: what HTTP mode
runs unchanged while it replaces the transports underneath.

    fuzz executor --executor fuzzer.targets.executor_robust:make_executor --http \\
        --implementations fuzzer.targets.executor_http_tools:TOOLS --policy http-policy.toml

The policy's ``[http_responses]`` gives the body a healthy service answers (``temperature`` and
``price`` here); without it the services answer ``{"ok": true}`` and these tools fail on the
missing field, as they would against a service whose API changed.
"""

from __future__ import annotations

from typing import Any, Optional

import httpx
import requests

WEATHER_URL = "https://weather.example.com/v1/current"
QUOTES_URL = "https://quotes.example.com/v2/quote"


def get_weather(city: str, date: Optional[str] = None, unit: str = "celsius") -> dict[str, Any]:
    """The current weather of a city (requests)."""
    params = {"q": city, "units": "metric" if unit == "celsius" else "imperial"}
    if date:
        params["date"] = date
    response = requests.get(WEATHER_URL, params=params, timeout=10)
    response.raise_for_status()
    body = response.json()
    return {"city": city, "temperature": body["temperature"], "unit": unit}


def get_stock_price(ticker: str, exchange: Optional[str] = None, include_history_days: int = 0,
                    price_threshold: Optional[float] = None) -> dict[str, Any]:
    """The latest price of a stock (httpx)."""
    params: dict[str, Any] = {"symbol": ticker}
    if exchange:
        params["exchange"] = exchange
    with httpx.Client(timeout=10) as client:
        response = client.get(QUOTES_URL, params=params)
        response.raise_for_status()
        body = response.json()
    return {"ticker": ticker, "price": float(body["price"])}


TOOLS = {"get_weather": get_weather, "get_stock_price": get_stock_price}
