"""Address and transaction-hash formats per family (docs/spec.md §4.1 rule 4): one row per case, valid and invalid."""

from __future__ import annotations

import pytest

from chain_watchers.base import InvalidAddress, InvalidTxHash
from chain_watchers.evm import EvmAdapter
from chain_watchers.solana import SolanaAdapter
from chain_watchers.ton import TonAdapter
from chain_watchers.tron import TronAdapter

USDT_ETH = "0xdAC17F958D2ee523a2206206994597C13D831ec7"
EVM_HASH = "0x" + "5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"
USDT_TRON = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
TRON_HASH = "a5b2b1e0c4d4b4b0e8c3f2a1d9e8f7c6b5a4938271605f4e3d2c1b0a99887766"
USDC_SOL = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL_SIG = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
USDT_TON = "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs"
USDT_TON_RAW = "0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe"
TON_HASH = "fbff" + "3e" * 30  # bytes whose base64 uses + and /, so both alphabets are exercised

ADDRESSES = [
    # family adapter, input, normal form or the exception
    (EvmAdapter, USDT_ETH, USDT_ETH),
    (EvmAdapter, USDT_ETH.lower(), USDT_ETH),  # one case carries no EIP-55 checksum: accepted
    (EvmAdapter, "0x" + USDT_ETH[2:].upper(), USDT_ETH),
    (EvmAdapter, "0xdAC17F958D2ee523a2206206994597C13D831Ec7", InvalidAddress),  # mixed case, wrong checksum
    (EvmAdapter, USDT_ETH[2:], InvalidAddress),  # no 0x
    (EvmAdapter, "0X" + USDT_ETH[2:], InvalidAddress),
    (EvmAdapter, USDT_ETH[:-1], InvalidAddress),  # 39 hex digits
    (EvmAdapter, USDT_ETH + "0", InvalidAddress),  # 41 hex digits
    (EvmAdapter, "0x" + "g" * 40, InvalidAddress),
    (EvmAdapter, " " + USDT_ETH, InvalidAddress),
    (EvmAdapter, "", InvalidAddress),
    (EvmAdapter, USDT_TRON, InvalidAddress),
    (TronAdapter, USDT_TRON, USDT_TRON),
    (TronAdapter, USDT_TRON[:-1] + "u", InvalidAddress),  # base58check checksum fails
    (TronAdapter, "41a614f803b6fd780986a42c78ec9c7f77e6ded13c", InvalidAddress),  # hex form: one spelling only
    (TronAdapter, "0xa614f803b6fd780986a42c78ec9c7f77e6ded13c", InvalidAddress),
    (TronAdapter, "t" + USDT_TRON[1:], InvalidAddress),
    (TronAdapter, USDT_TRON[:-1], InvalidAddress),  # 33 characters
    (TronAdapter, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj60", InvalidAddress),  # 0 is not base58
    (TronAdapter, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", InvalidAddress),  # a Bitcoin address
    (SolanaAdapter, USDC_SOL, USDC_SOL),
    (SolanaAdapter, "11111111111111111111111111111111", "11111111111111111111111111111111"),  # the system program
    (SolanaAdapter, "0" + USDC_SOL[1:], InvalidAddress),  # 0 is not base58
    (SolanaAdapter, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGG", InvalidAddress),  # decodes to fewer than 32 bytes
    (SolanaAdapter, SOL_SIG, InvalidAddress),  # a signature is 64 bytes
    (SolanaAdapter, USDT_ETH, InvalidAddress),
    (SolanaAdapter, "", InvalidAddress),
    (TonAdapter, USDT_TON, USDT_TON_RAW),
    (TonAdapter, "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id/sDs", USDT_TON_RAW),  # standard base64 alphabet
    (TonAdapter, "UQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_p0p", USDT_TON_RAW),  # non-bounceable flag
    (TonAdapter, USDT_TON_RAW, USDT_TON_RAW),
    (TonAdapter, USDT_TON_RAW.upper(), USDT_TON_RAW),
    (TonAdapter, "Ef8zMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM0vF", "-1:" + "33" * 32),  # masterchain
    (TonAdapter, USDT_TON[:-1] + "t", InvalidAddress),  # CRC16 fails
    (TonAdapter, USDT_TON[:-1], InvalidAddress),  # 47 characters
    (TonAdapter, USDT_TON_RAW[:-1], InvalidAddress),  # 63 hex digits
    (TonAdapter, "1:" + USDT_TON_RAW[2:], InvalidAddress),  # no workchain 1
    (TonAdapter, "EQEzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzlR", InvalidAddress),  # well formed, workchain 1
    (TonAdapter, USDT_ETH, InvalidAddress),
]

HASHES = [
    (EvmAdapter, EVM_HASH, EVM_HASH),
    (EvmAdapter, "0x" + EVM_HASH[2:].upper(), EVM_HASH),
    (EvmAdapter, EVM_HASH[2:], InvalidTxHash),  # bare hex is TRON's form
    (EvmAdapter, "0X" + EVM_HASH[2:], InvalidTxHash),
    (EvmAdapter, EVM_HASH[:-1], InvalidTxHash),  # 63 hex digits
    (EvmAdapter, EVM_HASH + "0", InvalidTxHash),  # 65 hex digits
    (EvmAdapter, "0x" + "z" * 64, InvalidTxHash),
    (EvmAdapter, SOL_SIG, InvalidTxHash),
    (TronAdapter, TRON_HASH, TRON_HASH),
    (TronAdapter, TRON_HASH.upper(), TRON_HASH),
    (TronAdapter, "0x" + TRON_HASH, InvalidTxHash),  # an EVM-style hash
    (TronAdapter, TRON_HASH[:-1], InvalidTxHash),
    (TronAdapter, TRON_HASH + "a", InvalidTxHash),
    (TronAdapter, "g" + TRON_HASH[1:], InvalidTxHash),
    (TronAdapter, SOL_SIG, InvalidTxHash),
    (SolanaAdapter, SOL_SIG, SOL_SIG),
    (SolanaAdapter, SOL_SIG[:80], InvalidTxHash),  # decodes to fewer than 64 bytes
    (SolanaAdapter, USDC_SOL, InvalidTxHash),  # a 32-byte key, not a signature
    (SolanaAdapter, "0" + SOL_SIG[1:], InvalidTxHash),  # 0 is not base58
    (SolanaAdapter, EVM_HASH, InvalidTxHash),
    (SolanaAdapter, "", InvalidTxHash),
    (TonAdapter, TON_HASH, TON_HASH),
    (TonAdapter, TON_HASH.upper(), TON_HASH),
    (TonAdapter, "+/8+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4=", TON_HASH),  # base64, as toncenter prints it
    (TonAdapter, "-_8-Pj4-Pj4-Pj4-Pj4-Pj4-Pj4-Pj4-Pj4-Pj4-Pj4=", TON_HASH),  # base64url
    (TonAdapter, "+/8+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4", InvalidTxHash),  # padding missing
    (TonAdapter, "+/8+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj*=", InvalidTxHash),  # * is not base64
    (TonAdapter, "0x" + TON_HASH, InvalidTxHash),
    (TonAdapter, TON_HASH[:-1], InvalidTxHash),
    (TonAdapter, SOL_SIG, InvalidTxHash),
]


def _case_id(row: tuple) -> str:
    adapter, value, expected = row
    outcome = expected.__name__ if isinstance(expected, type) else "ok"
    return f"{adapter.__name__.removesuffix('Adapter').lower()}-{outcome}-{value[:18] or 'empty'}"


def _check(validate, value: str, expected) -> None:
    if isinstance(expected, type):
        with pytest.raises(expected):
            validate(value)
    else:
        assert validate(value) == expected


@pytest.mark.parametrize(("adapter", "value", "expected"), ADDRESSES, ids=[_case_id(row) for row in ADDRESSES])
def test_address(adapter, value: str, expected) -> None:
    _check(adapter.validate_address, value, expected)


@pytest.mark.parametrize(("adapter", "value", "expected"), HASHES, ids=[_case_id(row) for row in HASHES])
def test_tx_hash(adapter, value: str, expected) -> None:
    _check(adapter.validate_tx_hash, value, expected)
