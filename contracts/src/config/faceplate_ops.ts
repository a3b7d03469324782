import { operationsOfAll } from './resource.ts';
import { faceplateResource, placeholderResource } from './schemas.ts';

/** The faceplate operations, from the faceplate's definition (`schemas.ts`). */
export const {
  list: getFaceplates,
  create: createFaceplate,
  get: getFaceplate,
  update: updateFaceplate,
  remove: deleteFaceplate,
} = faceplateResource.operations;

/** The placeholder operations, from the placeholder's definition (`schemas.ts`). */
export const {
  list: getFaceplatePlaceholders,
  create: createFaceplatePlaceholder,
  get: getFaceplatePlaceholder,
  update: updateFaceplatePlaceholder,
  remove: deleteFaceplatePlaceholder,
} = placeholderResource.operations;

/** The faceplate and placeholder operations. */
export const faceplateOperations = operationsOfAll([faceplateResource, placeholderResource]);
