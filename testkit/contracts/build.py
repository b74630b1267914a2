"""Compile each contract here with solcjs into NAME.json (ABI + creation bytecode)."""

import json
import pathlib
import subprocess

HERE = pathlib.Path(__file__).parent
# Each contract's target: solcjs 0.8.37 defaults to osaka, newer than the chains that run them. TestUSD runs on
# py-evm (cancun at most); PaymentToken runs on ganache 7.9 (shanghai at most: cancun's MCOPY is an invalid opcode).
CONTRACTS = {"TestUSD": "cancun", "PaymentToken": "shanghai"}
OPTIMIZER = {"enabled": True, "runs": 200}


def main() -> None:
    for name, evm_version in CONTRACTS.items():
        build(name, evm_version)


def build(name: str, evm_version: str) -> None:
    source = f"{name}.sol"
    settings = {"evmVersion": evm_version, "optimizer": OPTIMIZER,
                "outputSelection": {"*": {name: ["abi", "evm.bytecode.object"]}}}
    request = {
        "language": "Solidity",
        "sources": {source: {"content": (HERE / source).read_text()}},
        "settings": settings,
    }
    version = subprocess.run(["solcjs", "--version"], capture_output=True, text=True, check=True)
    result = subprocess.run(
        ["solcjs", "--standard-json"], input=json.dumps(request), capture_output=True, text=True, check=True
    )
    # solcjs prints a notice about SMT solvers before the JSON document.
    output = json.loads(result.stdout[result.stdout.index("{") :])
    errors = [e for e in output.get("errors", []) if e["severity"] == "error"]
    if errors:
        raise SystemExit("\n".join(e["formattedMessage"] for e in errors))
    contract = output["contracts"][source][name]
    artifact = {
        "contractName": name,
        "compiler": version.stdout.strip(),
        "settings": settings,
        "abi": contract["abi"],
        "bytecode": "0x" + contract["evm"]["bytecode"]["object"],
    }
    (HERE / f"{name}.json").write_text(json.dumps(artifact, indent=2) + "\n")


if __name__ == "__main__":
    main()
