import { describe, expect, it } from 'vitest';
import * as generated from '../helpers/contracts/chain-contracts.generated.ts';
import { compileChainContracts } from '../helpers/contracts/compile.ts';

describe('test chain contracts', () => {
  it('the committed ABIs and runtime code are what chain-contracts.sol compiles to (run `npm run compile-test-contracts`)', () => {
    const { compiler, contracts } = compileChainContracts();
    expect(generated.compiler).toBe(compiler);
    expect(generated.testUsdcAbi).toEqual(contracts.TestUsdc.abi);
    expect(generated.testUsdcRuntimeCode).toBe(contracts.TestUsdc.runtimeCode);
    expect(generated.multicall3SubsetAbi).toEqual(contracts.Multicall3Subset.abi);
    expect(generated.multicall3SubsetRuntimeCode).toBe(contracts.Multicall3Subset.runtimeCode);
  }, 120_000); // solc-js compiles in a few seconds, several times that on a loaded machine
});
