// The client's side of the Converse format: what the AWS SDK's ConverseCommand and ConverseStreamCommand send read
// into the hub, answers written back. A kept stream is assembled by the Converse upstream's own stream reader
// (../converse/), which reads the events as the gateway keeps them, whichever upstream answered.
import { assembleStream, assembleStreamInSlices } from '../../../translate/assemble.js'
import type { CallPlan, ClientFormat } from '../../../translate/format.js'
import { converseMembers } from '../converse/index.js'
import { converseRequestToHub } from './request.js'
import { converseErrorFromHub, converseResponseFromHub } from './response.js'
import { ConverseStreamEncoder } from './stream.js'

/** What assembling a kept stream needs of a plan: nothing a Converse answer says (it names no model, id or time). */
const ASSEMBLY_PLAN: CallPlan = {
  model: '',
  upstreamModel: '',
  stream: false,
  includeUsage: true,
  requestId: '',
  created: 0,
  request: {},
}

const reader = converseMembers.upstreamFormat

/** The Converse format's client-side readers and writers. */
export const converseClientFormat: ClientFormat = {
  requestToHub: converseRequestToHub,
  responseFromHub: converseResponseFromHub,
  errorFromHub: converseErrorFromHub,
  streamEncoder: (plan) => new ConverseStreamEncoder(plan),
  assembleStream: (data) => assembleStream(reader, converseClientFormat, data, ASSEMBLY_PLAN),
  assembleStreamInSlices: (data) => assembleStreamInSlices(reader, converseClientFormat, data, ASSEMBLY_PLAN),
}
