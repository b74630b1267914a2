// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title PaymentToken: an ERC-20 whose symbol, decimals and transfer fee are set at deployment.
/// @notice For local test chains only (anyone may mint). It stands in for the stablecoins whose shape differs from
/// TestUSD: 18 decimals (BSC's Binance-Peg USDT and USDC), a fee taken on every transfer (fee-on-transfer tokens),
/// and a look-alike that copies a real token's symbol from another address.
contract PaymentToken {
    string public name;
    string public symbol;
    uint8 public immutable decimals;
    uint16 public immutable feeBasisPoints;  // of every transfer, kept by the deployer
    address public immutable feeCollector;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory symbol_, uint8 decimals_, uint16 feeBasisPoints_) {
        require(feeBasisPoints_ <= 10_000, "PaymentToken: fee");
        name = symbol_;
        symbol = symbol_;
        decimals = decimals_;
        feeBasisPoints = feeBasisPoints_;
        feeCollector = msg.sender;
    }

    function mint(address to, uint256 amount) external {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _move(msg.sender, to, amount);
        return true;
    }

    /// Several transfers in one transaction (what batch payout contracts and multisends do): one Transfer log each.
    function transferMany(address[] calldata to, uint256[] calldata amounts) external returns (bool) {
        require(to.length == amounts.length, "PaymentToken: lengths");
        for (uint256 i = 0; i < to.length; i++) {
            _move(msg.sender, to[i], amounts[i]);
        }
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= amount, "PaymentToken: allowance");
        allowance[from][msg.sender] = allowed - amount;
        _move(from, to, amount);
        return true;
    }

    function _move(address from, address to, uint256 amount) private {
        require(balanceOf[from] >= amount, "PaymentToken: balance");
        uint256 fee = amount * feeBasisPoints / 10_000;
        balanceOf[from] -= amount;
        balanceOf[to] += amount - fee;
        emit Transfer(from, to, amount - fee);
        if (fee > 0) {
            balanceOf[feeCollector] += fee;
            emit Transfer(from, feeCollector, fee);
        }
    }
}
