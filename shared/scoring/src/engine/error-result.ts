// The result of a scoring that did not complete is part of the port: one definition, in the domain.
export { errorScoreResult, phaseOf } from '@guard/domain';
