import pytest

from common import money

VALID = [("10.50", 10_500_000), ("0.000001", 1), ("1", 1_000_000), ("999999999999.999999", 999_999_999_999_999_999)]
INVALID = [
    ("0", "greater than zero"), ("0.000000", "greater than zero"), ("-1.00", "positive decimal"),
    ("1.0000001", "more than 6 decimal"), ("1e3", "positive decimal"), (" 1", "positive decimal"),
    ("01.5", "positive decimal"), ("", "positive decimal"), (10, "decimal string"), (10.5, "decimal string"),
    ("1.", "positive decimal"), (".5", "positive decimal"),
]


@pytest.mark.parametrize("text,micros", VALID)
def test_parse(text, micros):
    assert money.parse(text) == micros


@pytest.mark.parametrize("value,message", INVALID)
def test_parse_refuses(value, message):
    with pytest.raises(money.AmountError, match=message):
        money.parse(value)


@pytest.mark.parametrize("micros,text", [(10_500_000, "10.50"), (1, "0.000001"), (0, "0.00"), (1_234_567, "1.234567"), (-2_500_000, "-2.50")])
def test_format(micros, text):
    assert money.format(micros) == text
