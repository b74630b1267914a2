"""The wallet button: an injected EIP-1193 provider, and the SDK's onSignRequest proxy; both report the hash."""

from __future__ import annotations

from eth_abi import decode
from web3 import Web3

from tests.e2e.site import SIGNED_HASH
from tests.e2e.support import SEPOLIA_USDC

BASE_SEPOLIA_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
WALLET = "0x" + "12" * 20
INJECTED_HASH = "0x" + "cd" * 32
# A stand-in for a browser-extension wallet: answers the EIP-1193 calls the page makes and records them.
PROVIDER = """
window.walletCalls = [];
window.ethereum = {
  chainId: %(chain)r,
  request: async ({ method, params }) => {
    window.walletCalls.push({ method, params: params || [] });
    if (method === 'eth_requestAccounts') return [%(wallet)r];
    if (method === 'eth_chainId') return window.ethereum.chainId;
    if (method === 'wallet_switchEthereumChain') { window.ethereum.chainId = params[0].chainId; return null; }
    if (method === 'eth_sendTransaction') {
      if (window.rejectSend) throw Object.assign(new Error('User rejected the request'), { code: 4001 });
      return %(hash)r;
    }
    throw new Error('unexpected ' + method);
  },
};
"""


def transfer_of(tx: dict) -> tuple[str, int]:
    """(recipient, amount) of ERC-20 transfer calldata."""
    data = bytes.fromhex(tx["data"][2:])
    assert data[:4].hex() == "a9059cbb"
    to, amount = decode(["address", "uint256"], data[4:])
    return Web3.to_checksum_address(to), amount


async def attempts(shop, session_id: str) -> list:
    rows = await shop.stack.pool.fetch(
        "SELECT network, tx_hash, status FROM payment_attempts WHERE session_id = $1", session_id)
    return [dict(r) for r in rows]


async def test_an_injected_wallet_switches_chain_sends_the_transfer_and_reports_the_hash(shop):
    created = await shop.session()
    await shop.page.add_init_script(PROVIDER % {"chain": "0x1", "wallet": WALLET, "hash": INJECTED_HASH})
    await shop.page.goto(shop.checkout_url(created["session_key"]))
    await shop.page.click("details.quote[open] button.pay-wallet")
    await shop.page.wait_for_selector("#status[data-state=confirming]", timeout=10_000)

    calls = await shop.page.evaluate("window.walletCalls")
    assert [c["method"] for c in calls] == [
        "eth_requestAccounts", "eth_chainId", "wallet_switchEthereumChain", "eth_sendTransaction"]
    assert calls[2]["params"] == [{"chainId": hex(11155111)}]
    tx = calls[3]["params"][0]
    assert tx["from"] == WALLET and tx["to"] == SEPOLIA_USDC and tx["value"] == "0x0"
    to, amount = transfer_of(tx)
    assert (to, amount) == (shop.addresses["sepolia"], 10_000_000)
    assert await attempts(shop, created["session_id"]) == [
        {"network": "sepolia", "tx_hash": INJECTED_HASH, "status": "reported"}]
    assert await shop.page.text_content("#status") == "Payment seen, waiting for confirmations"
    assert await shop.page.text_content("details.quote[open] .wallet-note") == f"Transaction sent: {INJECTED_HASH}"
    assert await shop.page.is_visible("#wallet-address")


async def test_a_refused_transfer_is_said_under_the_button_and_reports_nothing(shop):
    created = await shop.session()
    await shop.page.add_init_script(PROVIDER % {"chain": hex(11155111), "wallet": WALLET, "hash": INJECTED_HASH})
    await shop.page.goto(shop.checkout_url(created["session_key"]))
    await shop.page.evaluate("window.rejectSend = true")
    await shop.page.click("details.quote[open] button.pay-wallet")
    note = "details.quote[open] .wallet-note"
    await shop.page.wait_for_function("(sel) => document.querySelector(sel).textContent.includes('rejected')", arg=note)
    assert await shop.page.text_content(note) == "The wallet did not send the payment: User rejected the request"
    assert await shop.page.is_enabled("details.quote[open] button.pay-wallet")
    assert await attempts(shop, created["session_id"]) == []
    assert await shop.page.get_attribute("#status", "data-state") == "waiting"


async def test_inside_the_sdk_a_preconnected_wallet_signs_through_on_sign_request(shop):
    created = await shop.session()
    await shop.open()
    await shop.checkout({"sessionId": created["session_key"], "walletAddress": WALLET, "walletChainId": 84532})
    await shop.event("ready")
    frame = await shop.frame()
    # Only the quotes on the pre-connected chain (Base Sepolia) offer the wallet button.
    visible = await frame.eval_on_selector_all(
        "button.pay-wallet", "(bs) => bs.filter((b) => !b.hidden).map((b) => b.closest('details').dataset.network)")
    assert visible == ["base-sepolia"]
    await frame.click("details.quote[data-network=base-sepolia] summary")
    await frame.click("details.quote[data-network=base-sepolia] button.pay-wallet")

    request = await shop.event("sign")
    assert request["method"] == "eth_sendTransaction"
    tx = request["params"][0]
    assert tx["from"] == WALLET and tx["to"] == BASE_SEPOLIA_USDC and tx["chainId"] == hex(84532)
    assert transfer_of(tx) == (shop.addresses["base-sepolia"], 10_000_000)
    await frame.wait_for_selector("#status[data-state=confirming]", timeout=10_000)
    assert await attempts(shop, created["session_id"]) == [
        {"network": "base-sepolia", "tx_hash": SIGNED_HASH, "status": "reported"}]
    assert "0x1212…1212" in await frame.text_content("#wallet-address")
