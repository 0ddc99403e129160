/** ajv (JSON Schema 2020-12) as the independent validator for constraint tests. */
import Ajv2020Module from 'ajv/dist/2020.js';

const Ajv2020 = Ajv2020Module.default;

/** A validator for `schema`: returns null when `value` is valid, else ajv's error text. */
export function validatorFor(schema: object | boolean): (value: unknown) => string | null {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const v = ajv.compile(schema);
  return (value) => (v(value) ? null : ajv.errorsText(v.errors));
}
