// Runs jetton transfers on @ton/sandbox (real TVM) with the standard jetton minter and wallet code (as compiled in
// @ton-community/assets-sdk) and prints the receiving accounts' transactions as BOCs, the form a lite server returns.
//
// stdin:  {"transfers": [{"name", "amount", "queryId", "comment"?, "commentInline"?, "binary"?, "commentBytes"?,
//          "to"?: "merchant"|"nobody", "master"?: "usdt"|"lookalike", "overdraw"?, "excessToOwner"?}]}
// stdout: {"accounts": {raw address: [transaction BOC base64, oldest first]}, "transfers": {name: {"account", "hash"}},
//          "masters": {name: raw}, "wallets": {master name: {owner raw: jetton wallet raw}}, "merchant", "nobody"}
// Everything here is executed by the sandbox's TVM; the only thing this script decides is what is sent.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Blockchain, internal } from "@ton/sandbox";
import { Address, Cell, beginCell, contractAddress, storeTransaction, toNano } from "@ton/core";

const require = createRequire(import.meta.url);
const { jettonMinterCode } = require("@ton-community/assets-sdk/dist/jetton/contracts/build/jetton-minter.js");
const { jettonWalletCode } = require("@ton-community/assets-sdk/dist/jetton/contracts/build/jetton-wallet.js");

const MINT = 21;
const INTERNAL_TRANSFER = 0x178d4519;
const TRANSFER = 0x0f8a7ea5;
const spec = JSON.parse(readFileSync(0, "utf8"));
const minterCode = Cell.fromBase64(jettonMinterCode.codeBoc);
const walletCode = Cell.fromBase64(jettonWalletCode.codeBoc);

const chain = await Blockchain.create();
const admin = await chain.treasury("admin");
const buyer = await chain.treasury("buyer");
const merchant = await chain.treasury("merchant", { predeploy: false });
const executed = []; // every transaction the sandbox ran, in order
// The merchant's wallet is deployed here, so its history starts with a transaction this script saw (prev lt 0).
executed.push(...(await chain.sendMessage(internal({
  from: admin.address, to: merchant.address, value: toNano("10"), stateInit: merchant.init,
}))).transactions);
const nobody = Address.parse(`0:${"ab".repeat(32)}`); // an owner whose wallet contract was never deployed

async function deployMinter(name) {
  const content = beginCell().storeUint(1, 8).storeStringTail(`USDT ${name}`).endCell(); // both say USDT
  const data = beginCell().storeCoins(0).storeAddress(admin.address).storeRef(content).storeRef(walletCode).endCell();
  const init = { code: minterCode, data };
  const address = contractAddress(0, init);
  const transfer = beginCell().storeUint(INTERNAL_TRANSFER, 32).storeUint(0, 64).storeCoins(1_000_000_000_000n)
    .storeAddress(address).storeAddress(admin.address).storeCoins(0).storeBit(0).endCell();
  const mint = beginCell().storeUint(MINT, 32).storeUint(0, 64).storeAddress(buyer.address)
    .storeCoins(toNano("0.2")).storeRef(transfer).endCell();
  executed.push(...(await admin.send({ to: address, value: toNano("1"), init, body: mint })).transactions);
  return address;
}

async function walletOf(master, owner) {
  const result = await chain.runGetMethod(master, "get_wallet_address", [
    { type: "slice", cell: beginCell().storeAddress(owner).endCell() },
  ]);
  return result.stackReader.readAddress();
}

function forwardPayload(t) {
  if (t.binary) return { inline: false, cell: beginCell().storeUint(0xb1a7b1a7, 32).storeBuffer(Buffer.from(t.binary, "hex")).endCell() };
  if (t.commentBytes) { // a text comment's op followed by bytes that need not be UTF-8
    const cell = beginCell().storeUint(0, 32).storeBuffer(Buffer.from(t.commentBytes, "hex")).endCell();
    return { inline: false, cell };
  }
  if (t.comment !== undefined) {
    return { inline: Boolean(t.commentInline), cell: beginCell().storeUint(0, 32).storeStringTail(t.comment).endCell() };
  }
  return null;
}

const masters = { usdt: await deployMinter("usdt"), lookalike: await deployMinter("lookalike") };
const owners = { merchant: merchant.address, nobody };
const raw = (address) => address.toRawString();
const transfers = {};
const touched = new Set();
for (const t of spec.transfers) {
  const master = masters[t.master ?? "usdt"];
  const owner = owners[t.to ?? "merchant"];
  const source = await walletOf(master, buyer.address);
  const payload = forwardPayload(t);
  const body = beginCell().storeUint(TRANSFER, 32).storeUint(BigInt(t.queryId), 64)
    .storeCoins(BigInt(t.overdraw ? 10n ** 15n : t.amount)).storeAddress(owner)
    .storeAddress(t.excessToOwner ? owner : buyer.address)
    .storeBit(0).storeCoins(toNano("0.01"));
  if (payload === null) body.storeBit(0);
  else if (payload.inline) body.storeBit(0).storeSlice(payload.cell.beginParse());
  else body.storeBit(1).storeRef(payload.cell);
  const sent = await buyer.send({ to: source, value: toNano("0.2"), body: body.endCell() });
  executed.push(...sent.transactions);
  const received = sent.transactions.find((tx) => tx.inMessage?.info.dest?.equals?.(owner));
  const refused = sent.transactions.find((tx) => tx.inMessage?.info.dest?.equals?.(source));
  touched.add(raw(owner));
  transfers[t.name] = received
    ? { account: raw(owner), hash: received.hash().toString("hex") }
    : { account: raw(owner), hash: refused.hash().toString("hex"), refusedBy: raw(source) };
}

// Every transaction of each receiving account, oldest first: the history a lite server pages through.
const accounts = {};
for (const account of touched) {
  const hashPart = BigInt(`0x${Address.parseRaw(account).hash.toString("hex")}`);
  accounts[account] = executed.filter((tx) => tx.address === hashPart)
    .map((tx) => beginCell().store(storeTransaction(tx)).endCell().toBoc().toString("base64"));
}
const wallets = {};
for (const [name, master] of Object.entries(masters)) {
  wallets[name] = {};
  for (const owner of Object.values(owners)) wallets[name][raw(owner)] = raw(await walletOf(master, owner));
}
process.stdout.write(JSON.stringify({
  accounts, transfers, wallets, masters: { usdt: raw(masters.usdt), lookalike: raw(masters.lookalike) },
  merchant: raw(merchant.address), nobody: raw(nobody),
}));
