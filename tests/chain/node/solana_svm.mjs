// Runs token transfers on litesvm (the real SPL Token, Token-2022 and Associated Token Account programs, in process)
// and prints what each recorded transaction did, shaped like a JSON-RPC getTransaction answer with jsonParsed encoding.
//
// stdin:  {"mints": [{"name", "address", "program": "token"|"token2022", "decimals", "feeBps"?}],
//          "transfers": [{"name", "mint", "to"?, "amount", "reference"?, "via"?: "direct"|"cpi", "fail"?, "times"?}]}
// stdout: {"transactions": {name: {"signature", "to", "result"}}}
//
// What the SVM itself produced: the executed instructions and their outcome (err), the log messages, the inner
// instructions with their stack heights, the compute units, and the account states before and after, from which the
// token balances are read. What this script shapes the way an RPC node renders it: the jsonParsed form of the top-level
// token instructions, the token balance entries (uiTokenAmount), and the "partially decoded" form of everything else.
import { readFileSync } from "node:fs";
import bs58 from "bs58";
import { getTransactionDecoder } from "@solana/kit";
import { LiteSVM } from "litesvm";
import {
  Keypair, PublicKey, SystemProgram, TransactionMessage, VersionedTransaction,
} from "@solana/web3.js";
import {
  ASSOCIATED_TOKEN_PROGRAM_ID, ExtensionType, MintLayout, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction, createInitializeMintInstruction,
  createInitializeTransferFeeConfigInstruction, createMintToCheckedInstruction, createRecoverNestedInstruction,
  createTransferCheckedInstruction, decodeInstruction, getAssociatedTokenAddressSync, getMintLen, unpackAccount,
} from "@solana/spl-token";

const spec = JSON.parse(readFileSync(0, "utf8"));
const svm = new LiteSVM();
const authority = Keypair.generate(); // mint authority of every mint made here
const PROGRAMS = { token: TOKEN_PROGRAM_ID, token2022: TOKEN_2022_PROGRAM_ID };
const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()]);
const FAILED = "failed";

function fund(key) {
  svm.airdrop(key.toBase58(), 10_000_000_000n);
}

function send(instructions, signers) {
  const message = new TransactionMessage({
    payerKey: signers[0].publicKey, recentBlockhash: svm.latestBlockhash(), instructions,
  }).compileToV0Message();
  const tx = new VersionedTransaction(message);
  tx.sign(signers);
  const outcome = svm.sendTransaction(getTransactionDecoder().decode(tx.serialize()));
  svm.expireBlockhash(); // a later identical transaction gets its own signature
  return { tx, outcome, failed: typeof outcome.err === "function" };
}

function mustSend(instructions, signers) {
  const { outcome, failed } = send(instructions, signers);
  if (failed) throw new Error(`setup transaction failed: ${outcome.toString()}`);
}

// A mint at the address the network configures: made by the real program at a fresh key, then its data moved there
// (a mint's data does not hold its own address), so the token program runs on exactly the bytes it wrote.
function makeMint({ address, program, decimals, feeBps = 0 }) {
  const programId = PROGRAMS[program];
  const fresh = Keypair.generate();
  const extensions = feeBps ? [ExtensionType.TransferFeeConfig] : [];
  const space = program === "token" ? MintLayout.span : getMintLen(extensions);
  const instructions = [
    SystemProgram.createAccount({
      fromPubkey: authority.publicKey, newAccountPubkey: fresh.publicKey, space,
      lamports: Number(svm.minimumBalanceForRentExemption(BigInt(space))), programId,
    }),
  ];
  if (feeBps) {
    instructions.push(createInitializeTransferFeeConfigInstruction(
      fresh.publicKey, authority.publicKey, authority.publicKey, feeBps, 10n ** 18n, programId));
  }
  instructions.push(createInitializeMintInstruction(fresh.publicKey, decimals, authority.publicKey, null, programId));
  mustSend(instructions, [authority, fresh]);
  const made = svm.getAccount(fresh.publicKey.toBase58());
  svm.setAccount({ ...made, address });
  return { mint: new PublicKey(address), programId, decimals };
}

function tokenAccount(owner, mint, offCurve = false) {
  return getAssociatedTokenAddressSync(mint.mint, owner, offCurve, mint.programId);
}

function mintTo(payer, owner, mint, amount, offCurve = false) {
  const account = tokenAccount(owner, mint, offCurve);
  mustSend([
    createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, account, owner, mint.mint, mint.programId),
    createMintToCheckedInstruction(mint.mint, account, authority.publicKey, amount, mint.decimals, [], mint.programId),
  ], [payer, authority]);
  return account;
}

function uiAmountString(amount, decimals) {
  const digits = amount.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

function tokenAmount(amount, decimals) {
  const text = uiAmountString(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: amount === 0n ? null : Number(text), uiAmountString: text };
}

// Token balances the way an RPC node lists them: every token account among the keys, read from account state.
function tokenBalances(keys, decimalsOf) {
  const balances = [];
  keys.forEach((key, accountIndex) => {
    const account = svm.getAccount(key.toBase58());
    if (!account.exists || !TOKEN_PROGRAMS.has(account.programAddress)) return;
    const programId = new PublicKey(account.programAddress);
    let parsed;
    try {
      parsed = unpackAccount(key, { data: Buffer.from(account.data), owner: programId }, programId);
    } catch {
      return; // a mint, not a token account
    }
    const mint = parsed.mint.toBase58();
    balances.push({
      accountIndex, mint, owner: parsed.owner.toBase58(), programId: programId.toBase58(),
      uiTokenAmount: tokenAmount(parsed.amount, decimalsOf[mint]),
    });
  });
  return balances;
}

function lamports(keys) {
  return keys.map((key) => Number(svm.getBalance(key.toBase58()) ?? 0n));
}

function partiallyDecoded(programId, accounts, data, stackHeight) {
  return { accounts: accounts.map(String), data: bs58.encode(Buffer.from(data)), programId: programId.toBase58(), stackHeight };
}

function renderInstruction(instruction, decimalsOf) {
  const programId = instruction.programId;
  if (TOKEN_PROGRAMS.has(programId.toBase58())) {
    try {
      const decoded = decodeInstruction(instruction, programId);
      if (decoded.data.instruction === 12) { // TransferChecked
        const { source, mint, destination, owner } = decoded.keys;
        const amount = decoded.data.amount;
        return {
          parsed: {
            info: {
              authority: owner.pubkey.toBase58(), destination: destination.pubkey.toBase58(),
              mint: mint.pubkey.toBase58(), source: source.pubkey.toBase58(),
              tokenAmount: tokenAmount(amount, decimalsOf[mint.pubkey.toBase58()]),
            },
            type: "transferChecked",
          },
          program: programId.equals(TOKEN_PROGRAM_ID) ? "spl-token" : "spl-token-2022",
          programId: programId.toBase58(), stackHeight: null,
        };
      }
    } catch {
      // an instruction this decoder does not know is rendered undecoded below, as a node does
    }
  }
  return partiallyDecoded(programId, instruction.keys.map((k) => k.pubkey), instruction.data, null);
}

function errorOf(outcome) {
  // litesvm names the error; the RPC's JSON form is {"InstructionError": [index, {"Custom": code}]}.
  const text = outcome.toString();
  const match = /InstructionError\((\d+), Custom\((\d+)\)\)/.exec(text);
  if (match) return { InstructionError: [Number(match[1]), { Custom: Number(match[2]) }] };
  return { Unrecognised: text };
}

function record(instructions, signers, decimalsOf, slot) {
  const message = new TransactionMessage({
    payerKey: signers[0].publicKey, recentBlockhash: svm.latestBlockhash(), instructions,
  }).compileToV0Message();
  const keys = message.staticAccountKeys;
  const pre = { tokens: tokenBalances(keys, decimalsOf), lamports: lamports(keys) };
  const { tx, outcome, failed } = send(instructions, signers);
  const meta = failed ? outcome.meta() : outcome;
  const err = failed ? errorOf(outcome) : null;
  const post = { tokens: tokenBalances(keys, decimalsOf), lamports: lamports(keys) };
  const inner = meta.innerInstructions().map((group, index) => ({
    index,
    instructions: group.map((item) => {
      const compiled = item.instruction();
      return partiallyDecoded(
        keys[compiled.programIdIndex()], Array.from(compiled.accounts(), (i) => keys[i]), compiled.data(),
        item.stackHeight());
    }),
  })).filter((group) => group.instructions.length > 0);
  const signature = bs58.encode(Buffer.from(tx.signatures[0]));
  return {
    signature,
    result: {
      blockTime: 1_760_000_000 + slot,
      meta: {
        computeUnitsConsumed: Number(meta.computeUnitsConsumed()),
        err,
        fee: 5000 * signers.length,
        innerInstructions: inner,
        loadedAddresses: { readonly: [], writable: [] },
        logMessages: meta.logs(),
        postBalances: post.lamports,
        postTokenBalances: post.tokens,
        preBalances: pre.lamports,
        preTokenBalances: pre.tokens,
        rewards: [],
        status: err === null ? { Ok: null } : { Err: err },
      },
      slot,
      transaction: {
        message: {
          accountKeys: keys.map((key, index) => ({
            pubkey: key.toBase58(), signer: message.isAccountSigner(index), source: "transaction",
            writable: message.isAccountWritable(index),
          })),
          addressTableLookups: [],
          instructions: instructions.map((instruction) => renderInstruction(instruction, decimalsOf)),
          recentBlockhash: message.recentBlockhash,
        },
        signatures: tx.signatures.map((s) => bs58.encode(Buffer.from(s))),
      },
      version: 0,
    },
  };
}

function withReference(instruction, reference) {
  if (reference) instruction.keys.push({ pubkey: new PublicKey(reference), isSigner: false, isWritable: false });
  return instruction;
}

fund(authority.publicKey);
const mints = {};
const decimalsOf = {};
for (const m of spec.mints) {
  mints[m.name] = makeMint(m);
  decimalsOf[m.address] = m.decimals;
}

const out = {};
let slot = 300_000_000;
for (const t of spec.transfers) {
  const mint = mints[t.mint];
  const amount = BigInt(t.amount);
  const held = t.fail ? amount - 1n : amount * BigInt(t.times ?? 1); // one base unit short makes the program refuse
  slot += 1;
  svm.warpToSlot(BigInt(slot));
  if (t.via === "cpi") {
    // The Associated Token Account program's RecoverNested moves tokens by a CPI into the token program
    // (transferChecked as an inner instruction): from an account owned by the wallet's own token account back
    // to the wallet. The receiving wallet signs, so this script makes it and reports it.
    const wallet = Keypair.generate();
    fund(wallet.publicKey);
    const own = mintTo(wallet, wallet.publicKey, mint, 0n);
    const nested = mintTo(wallet, own, mint, held, true);
    const instruction = withReference(createRecoverNestedInstruction(
      nested, mint.mint, own, own, mint.mint, wallet.publicKey, mint.programId, ASSOCIATED_TOKEN_PROGRAM_ID),
    t.reference);
    out[t.name] = { ...record([instruction], [wallet], decimalsOf, slot), to: wallet.publicKey.toBase58() };
    continue;
  }
  const buyer = Keypair.generate();
  fund(buyer.publicKey);
  const source = mintTo(buyer, buyer.publicKey, mint, held);
  const owner = new PublicKey(t.to);
  const destination = tokenAccount(owner, mint, !PublicKey.isOnCurve(owner.toBytes()));
  const instructions = [
    createAssociatedTokenAccountIdempotentInstruction(buyer.publicKey, destination, owner, mint.mint, mint.programId),
  ];
  for (let i = 0; i < (t.times ?? 1); i += 1) {
    instructions.push(withReference(createTransferCheckedInstruction(
      source, mint.mint, destination, buyer.publicKey, amount, mint.decimals, [], mint.programId), t.reference));
  }
  const recorded = record(instructions, [buyer], decimalsOf, slot);
  out[t.name] = { ...recorded, to: t.to, outcome: recorded.result.meta.err === null ? "ok" : FAILED };
}
process.stdout.write(JSON.stringify({ transactions: out }));
