/** The longest animal name, in Unicode code points (the column is varchar(255)); the rules are src/http/names.ts. */
export const NAME_MAX_CODE_POINTS = 255;
