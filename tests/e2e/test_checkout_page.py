"""The checkout page opened directly: locale, hidden parts, quotes and QR codes, copy, and live status."""

from __future__ import annotations

from playwright.async_api import expect

from tests.integration.helpers import expire_due, until


async def test_a_locale_page_is_rendered_in_japanese(shop):
    created = await shop.session()
    await shop.page.goto(shop.checkout_url(created["session_key"], locale="ja"))
    assert await shop.page.get_attribute("html", "lang") == "ja"
    assert await shop.page.text_content("#amount-label") == "お支払い金額"
    assert await shop.page.text_content("#status") == "お支払いをお待ちしています"
    assert await shop.page.text_content("#pay-title") == "ネットワークとコインを選択"
    assert "有効期限まで" in await shop.page.text_content("#countdown")


async def test_accept_language_picks_the_locale_when_the_query_does_not(browser, shop):
    created = await shop.session()
    context = await browser.new_context(locale="zh-TW", extra_http_headers={"Accept-Language": "zh-Hant-TW,zh;q=0.9"})
    page = await context.new_page()
    await page.goto(shop.checkout_url(created["session_key"]))
    assert await page.get_attribute("html", "lang") == "zh-TW"
    assert await page.text_content("#amount-label") == "應付金額"
    await context.close()


async def test_summary_and_header_show_unless_hidden(shop):
    created = await shop.session(line_items=[{"name": "Beans", "unit_amount": "5.00", "quantity": 2}])
    await shop.page.goto(shop.checkout_url(created["session_key"]))
    assert "2 × Beans" in await shop.page.text_content("[data-testid=summary]")
    assert await shop.page.text_content("[data-testid=header] .merchant") == "E2E Coffee Roasters"
    await shop.page.goto(shop.checkout_url(created["session_key"], hide_summary="1", hide_header="1"))
    assert await shop.page.locator("[data-testid=summary]").count() == 0
    assert await shop.page.locator("[data-testid=header]").count() == 0
    assert await shop.page.text_content("#amount-due") == "10.00"


async def test_every_network_shows_amount_address_and_a_qr_except_tron(shop):
    created = await shop.session()
    await shop.page.goto(shop.checkout_url(created["session_key"]))
    addresses = shop.addresses
    quotes = shop.page.locator("details.quote")
    seen = {}
    for i in range(await quotes.count()):
        quote = quotes.nth(i)
        await quote.locator("summary").click()
        network = await quote.get_attribute("data-network")
        seen[network] = await quote.locator("[data-testid=qr] svg").count()
        assert await quote.locator("[data-testid=address]").text_content() == addresses[network]
        assert "10.00" in await quote.locator("code.value").first.text_content()
    assert set(seen) == set(addresses)
    assert seen == {**{slug: 1 for slug in addresses}, "tron-nile": 0}
    tron = shop.page.locator("details.quote[data-network=tron-nile]")
    await tron.locator("summary").click()
    assert await tron.locator("[data-testid=no-qr]").is_visible()


async def test_the_copy_button_puts_the_address_on_the_clipboard(shop):
    created = await shop.session()
    await shop.page.goto(shop.checkout_url(created["session_key"]))
    await shop.page.click("details.quote[open] button.copy[data-copy^='0x']")
    assert await shop.page.evaluate("navigator.clipboard.readText()") == shop.addresses["sepolia"]
    assert await shop.page.text_content("details.quote[open] button.copy[data-copy^='0x']") == "Copied"


async def test_status_goes_from_partly_paid_to_paid_while_the_page_is_open(shop):
    created = await shop.session()
    await shop.page.goto(shop.checkout_url(created["session_key"]))
    assert await shop.page.get_attribute("#status", "data-state") == "waiting"
    await shop.pay(created["order_id"], "4.00")
    await shop.page.wait_for_selector("#status[data-state=partially_paid]", timeout=10_000)
    assert await shop.page.text_content("#status") == "Partly paid: 6.00 USD is still due"
    assert await shop.page.text_content("#amount-due") == "6.00"
    assert await shop.page.text_content("#amount-paid") == "Paid so far: 4.00 USD"
    await shop.pay(created["order_id"], "6.00")
    await shop.page.wait_for_selector("#status[data-state=paid]", timeout=10_000)
    assert await shop.page.is_hidden("#pay")
    assert await shop.page.text_content("#amount-due") == "10.00"


async def test_an_expired_session_says_so_and_offers_no_way_to_pay(shop):
    created = await shop.session(ttl_seconds=60, cancel_url=f"{shop.site}/return?result=canceled")
    assert await expire_due(shop.stack, 120) >= 1
    await until(shop.client, created["order_id"], lambda o: o["status"] == "CANCELED")
    await shop.page.goto(shop.checkout_url(created["session_key"]))
    assert await shop.page.get_attribute("#status", "data-state") == "expired"
    assert await shop.page.text_content("#status") == "This checkout has expired."
    assert await shop.page.is_hidden("#pay")
    assert await shop.page.text_content("#cancel") == "Back to the merchant"


async def test_two_open_checkouts_of_one_amount_quote_distinct_amounts_where_the_chain_has_no_reference(shop):
    first, second = await shop.session(), await shop.session()
    shown = {}
    for created in (first, second):
        await shop.page.goto(shop.checkout_url(created["session_key"]))
        shown[created["session_key"]] = await shop.page.eval_on_selector_all("details.quote", """(ds) =>
            Object.fromEntries(ds.map((d) => [d.dataset.network, d.querySelector('summary .num').textContent]))""")
    assert shown[first["session_key"]] == {network: "10.00" for network in shop.addresses}
    # EVM and TRON transfers carry no memo: the later session pays a micro-dollar more. Solana and TON use references.
    assert shown[second["session_key"]] == {
        "sepolia": "10.000001", "base-sepolia": "10.000001", "tron-nile": "10.000001",
        "solana-devnet": "10.00", "ton-testnet": "10.00"}


async def test_a_unique_amount_says_why_its_last_digits_are_there(shop):
    first, second = await shop.session(amount="12.50"), await shop.session(amount="12.50")
    # The first page opened quotes the plain amount (a page takes its amounts as it opens), with nothing to explain.
    await shop.page.goto(shop.checkout_url(first["session_key"], locale="en"))
    await expect(shop.page.locator("details.quote[open] code.value").first).to_have_text("12.50 USDC")
    await expect(shop.page.get_by_test_id("unique-amount")).to_have_count(0)
    await shop.page.goto(shop.checkout_url(second["session_key"], locale="en"))
    sepolia = shop.page.locator("details.quote[data-network=sepolia]").first
    await expect(sepolia.locator("code.value").first).to_have_text("12.500001 USDC")
    await expect(sepolia.get_by_test_id("unique-amount")).to_have_text(
        "The last digits tell your payment apart from others sent to this address: send exactly this amount,"
        " not 12.50 USDC.")
    # Solana's transfer carries a reference instead: its amount is the plain one and needs no word.
    await shop.page.locator("details.quote[data-network=solana-devnet] summary").click()
    solana = shop.page.locator("details.quote[data-network=solana-devnet]")
    await expect(solana.locator("code.value").first).to_have_text("12.50 USDC")
    await expect(solana.get_by_test_id("unique-amount")).to_have_count(0)
