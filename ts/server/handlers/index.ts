/** Every ApiKey the broker serves, with its codec and handler. */
import { apiVersionsCodec } from '../../protocol/apis/api-versions.js'
import { createTopicsCodec } from '../../protocol/apis/create-topics.js'
import { fetchCodec } from '../../protocol/apis/fetch.js'
import { listOffsetsCodec } from '../../protocol/apis/list-offsets.js'
import { metadataCodec } from '../../protocol/apis/metadata.js'
import { produceCodec } from '../../protocol/apis/produce.js'
import type { Broker } from '../broker.js'
import { apiVersionsHandler } from './api-versions.js'
import { createTopicsHandler } from './create-topics.js'
import { fetchHandler } from './fetch.js'
import { listOffsetsHandler } from './list-offsets.js'
import { metadataHandler } from './metadata.js'
import { produceHandler } from './produce.js'

export function registerHandlers(broker: Broker): void {
  broker.requests
    .register(produceCodec, produceHandler(broker))
    .register(fetchCodec, fetchHandler(broker))
    .register(listOffsetsCodec, listOffsetsHandler(broker))
    .register(metadataCodec, metadataHandler(broker))
    .register(apiVersionsCodec, apiVersionsHandler(broker))
    .register(createTopicsCodec, createTopicsHandler(broker))
}
