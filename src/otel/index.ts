export { type InstrumentOptions, instrumentGateway } from './instrument.js'
