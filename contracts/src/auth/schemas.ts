import { Type, type Static } from '@sinclair/typebox';

/** Role names, in increasing power. */
export const RoleName = Type.Union([Type.Literal('viewer'), Type.Literal('operator'), Type.Literal('editor'), Type.Literal('admin')]);

/** Ids the auth service hands out: UUIDs, plus the fixed id `default` of the first space. */
export const EntityId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });

/** Audit fields every stored entity carries, set by the service. */
export const AuditFields = {
  createdBy: Type.Union([Type.String(), Type.Null()]),
  creationDate: Type.String({ format: 'date-time' }),
  lastModifiedBy: Type.Union([Type.String(), Type.Null()]),
  lastModifiedDate: Type.String({ format: 'date-time' }),
};

/** A password as the platform accepts it: 8 to 1024 characters, never truncated. */
export const Password = Type.String({ minLength: 8, maxLength: 1024 });

/** A user name: letters, digits and `._@-`, compared case-insensitively. */
export const Username = Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9._@-]+$' });

/** Body of createUser. */
export const UserCreateRequest = Type.Object(
  {
    username: Username,
    password: Password,
    email: Type.Optional(Type.Union([Type.String({ format: 'email', maxLength: 320 }), Type.Null()])),
    phone: Type.Optional(Type.Union([Type.String({ maxLength: 15 }), Type.Null()])),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    roles: Type.Array(RoleName, { minItems: 1, maxItems: 4, uniqueItems: true }),
    spaces: Type.Array(EntityId, { minItems: 1, maxItems: 100, uniqueItems: true }),
  },
  { additionalProperties: false },
);
export type UserCreateRequest = Static<typeof UserCreateRequest>;

/** Body of updateUser: every field optional; a password given is re-hashed. */
export const UserUpdateRequest = Type.Object(
  {
    username: Type.Optional(Username),
    password: Type.Optional(Password),
    email: Type.Optional(Type.Union([Type.String({ format: 'email', maxLength: 320 }), Type.Null()])),
    phone: Type.Optional(Type.Union([Type.String({ maxLength: 15 }), Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
    roles: Type.Optional(Type.Array(RoleName, { minItems: 1, maxItems: 3, uniqueItems: true })),
    spaces: Type.Optional(Type.Array(EntityId, { minItems: 1, maxItems: 100, uniqueItems: true })),
  },
  { additionalProperties: false },
);
export type UserUpdateRequest = Static<typeof UserUpdateRequest>;

/** A user as the API shows it: never a password, hash or OTP secret. */
export const UserResponse = Type.Object({
  id: EntityId,
  username: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  phone: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
  otpType: Type.Union([Type.Literal('none'), Type.Literal('totp')]),
  roles: Type.Array(RoleName),
  spaces: Type.Array(EntityId),
  requirePasswordReset: Type.Boolean({
    description:
      "Set when someone else set the password (an administrator's reset, the admin command, the first start's generated " +
      'administrator password); cleared when the user chooses a new one. Until then every operation but the own password ' +
      "change, sign-out, refresh and reading one's own profile answers 403 `password_change_required`.",
  }),
  ...AuditFields,
});
export type UserResponse = Static<typeof UserResponse>;

/** Answer of OTP enrolment: the only answer that ever shows a secret. */
export const OtpEnrolment = Type.Object({
  otp_type: Type.Literal('TOTP'),
  secret: Type.String(),
  otpauth_url: Type.String(),
});

/** Body of createSpace and updateSpace. */
export const SpaceRequest = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

/** A space. */
export const SpaceResponse = Type.Object({ id: EntityId, name: Type.String(), ...AuditFields });
export type SpaceResponse = Static<typeof SpaceResponse>;

/** IP filter settings: comma or space separated addresses and CIDRs; empty `allowedIps` means no allow-list. */
export const IpSettingsRequest = Type.Object(
  {
    allowedIps: Type.Optional(Type.String({ maxLength: 1024 })),
    deniedIps: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

/** IP filter settings as stored. */
export const IpSettingsResponse = Type.Object({
  allowedIps: Type.String(),
  deniedIps: Type.String(),
  lastModifiedBy: Type.Union([Type.String(), Type.Null()]),
  lastModifiedDate: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type IpSettingsResponse = Static<typeof IpSettingsResponse>;

/** One login or OTP attempt of the auth log. */
export const AuthAttempt = Type.Object({
  username: Type.String(),
  ip: Type.Union([Type.String(), Type.Null()]),
  dttm: Type.String({ format: 'date-time' }),
  time: Type.Integer(),
  isSuccessful: Type.Boolean(),
  msg: Type.String(),
});

/** A page of the auth log, in the paging shape of the reference. */
export const AuthAttemptPage = Type.Object({
  content: Type.Array(AuthAttempt),
  number: Type.Integer(),
  size: Type.Integer(),
  totalElements: Type.Integer(),
  totalPages: Type.Integer(),
  numberOfElements: Type.Integer(),
  first: Type.Boolean(),
  last: Type.Boolean(),
  empty: Type.Boolean(),
});

/** Who the caller is, as `/api/auth/current-user` answers. */
export const CurrentUser = Type.Object({
  id: EntityId,
  name: Type.String(),
  roles: Type.Array(RoleName),
  spaces: Type.Array(EntityId),
  activeSpace: Type.Union([EntityId, Type.Null()]),
  remoteAddress: Type.Union([Type.String(), Type.Null()]),
});

/** A role as the reference's role entities: the four built-in roles, their id is their name. */
export const RoleResponse = Type.Object({ id: RoleName, name: RoleName, ...AuditFields });
export type RoleResponse = Static<typeof RoleResponse>;

/** A six-digit TOTP code. */
export const OtpCode = Type.String({ pattern: '^[0-9]{6}$', description: 'The current six-digit code of the authenticator app.' });

/**
 * What a user may change about themself: email, phone and the OTP type. The step-up fields confirm a
 * change of the OTP type and are ignored otherwise.
 */
export const ProfileUpdateRequest = Type.Object(
  {
    email: Type.Union([Type.String({ format: 'email', maxLength: 320 }), Type.Literal(''), Type.Null()], {
      description: 'An address; empty or null removes it.',
    }),
    phone: Type.Optional(Type.Union([Type.String({ maxLength: 15 }), Type.Null()])),
    otpType: Type.Optional(
      Type.Union([Type.Literal('none'), Type.Literal('totp')], {
        description: 'The OTP type this platform offers is `totp`; `none` turns it off.',
      }),
    ),
    currentPassword: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1024, description: "Step-up: the caller's password, for a change of the OTP type." }),
    ),
    otpCode: Type.Optional(OtpCode),
  },
  { additionalProperties: false },
);
export type ProfileUpdateRequest = Static<typeof ProfileUpdateRequest>;

/** Step-up for a change of one's own OTP: the password, and the current code when enrolled. */
export const OtpStepUp = Type.Object(
  {
    currentPassword: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: "The caller's password; needed when the user acts on themself (administrators too).",
      }),
    ),
    otpCode: Type.Optional(OtpCode),
  },
  { additionalProperties: false },
);
export type OtpStepUp = Static<typeof OtpStepUp>;

/** Body of a change of one's own password. */
export const OwnPasswordChange = Type.Object(
  {
    oldPassword: Type.Optional(
      Type.String({ maxLength: 1024, description: 'The current password; without it (or wrong) 403 `reauthentication_required`.' }),
    ),
    newPassword: Type.String({ minLength: Password.minLength, maxLength: Password.maxLength }),
    newPasswordAgain: Type.String({ maxLength: Password.maxLength, description: 'The new password once more; it must be the same.' }),
    otpCode: Type.Optional(OtpCode),
  },
  { additionalProperties: false },
);
export type OwnPasswordChange = Static<typeof OwnPasswordChange>;

/** Optional body of an administrator's password reset. */
export const AdminPasswordReset = Type.Object(
  {
    newPassword: Type.Optional(
      Type.String({
        minLength: Password.minLength,
        maxLength: Password.maxLength,
        description: 'A temporary password the administrator hands over; never answered or logged.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** What the sign-in of this platform offers, for a login page to adapt to. */
export const AuthFeatures = Type.Object({
  registrationEnabled: Type.Boolean({ description: 'Always false: accounts are created by administrators.' }),
  oauthEnabled: Type.Boolean({ description: 'Always false: no external identity provider.' }),
  otpTypes: Type.Array(Type.Literal('totp'), { description: 'Second factors a user may enrol in.' }),
  lockoutThreshold: Type.Integer({ minimum: 1, description: 'Consecutive failed checks that lock a username (LOCKOUT_THRESHOLD).' }),
  lockoutSeconds: Type.Integer({ minimum: 1, description: 'How long a lock lasts (LOCKOUT_SECONDS).' }),
  passwordMinLength: Type.Integer(),
  passwordMaxLength: Type.Integer(),
});
export type AuthFeatures = Static<typeof AuthFeatures>;
