"""Compile TestUSD.sol with solcjs into TestUSD.json (ABI + creation bytecode)."""

import json
import pathlib
import subprocess

HERE = pathlib.Path(__file__).parent
SOURCE = "TestUSD.sol"
# py-evm stops at cancun/prague; solcjs 0.8.37 defaults to osaka, which py-evm cannot run.
SETTINGS = {
    "evmVersion": "cancun",
    "optimizer": {"enabled": True, "runs": 200},
    "outputSelection": {"*": {"TestUSD": ["abi", "evm.bytecode.object"]}},
}


def main() -> None:
    request = {
        "language": "Solidity",
        "sources": {SOURCE: {"content": (HERE / SOURCE).read_text()}},
        "settings": SETTINGS,
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
    contract = output["contracts"][SOURCE]["TestUSD"]
    artifact = {
        "contractName": "TestUSD",
        "compiler": version.stdout.strip(),
        "settings": SETTINGS,
        "abi": contract["abi"],
        "bytecode": "0x" + contract["evm"]["bytecode"]["object"],
    }
    (HERE / "TestUSD.json").write_text(json.dumps(artifact, indent=2) + "\n")


if __name__ == "__main__":
    main()
