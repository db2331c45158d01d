export interface Sessions {
  opened: number;
  open: number;
}
export declare class SessionCounter {
  constructor(url: string);
  start(): Promise<boolean>;
  read(): Promise<Sessions | null>;
  close(): Promise<void>;
}
export declare function sessionsSince(
  before: Sessions | null,
  after: Sessions | null,
): { opened: number; closed: number } | null;
